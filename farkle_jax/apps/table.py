"""Turn table of a finished run for any start-of-turn state.

    python -m farkle_jax.apps.table --workdir W --b 0 --d 0 --f 0 --e 0 [--json]
    python -m farkle_jax.apps.table --workdir W3 --scores 0,500,1200

Rows are turn totals t, columns n = 6..1 dice to roll; each cell holds the
win probability of the player to move, whether banking or rolling is best,
and '-' for states no sequence of rolls reaches.
"""

import json

from absl import app, flags

import farkle_jax  # noqa: F401  (enables float64)
from farkle_jax.apps import command_line
from farkle_jax.solver import configuration, queries, results
from farkle_jax.strategy import seat_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run.")
_B = flags.DEFINE_integer("b", 0, "Banked score of the player to move.")
_D = flags.DEFINE_integer("d", 0, "Banked score of the opponent.")
_F = flags.DEFINE_integer("f", 0, "Farkle count of the player to move.")
_E = flags.DEFINE_integer("e", 0, "Farkle count of the opponent.")
_T_MAX = flags.DEFINE_integer(
    "t_max", None, "Last turn total to list (default: where every n banks; "
    "3,000 for more than two players).")
flags.DEFINE_string(
    "scores", None, "A run of more than two players: every banked score in "
    "turn order from the player to move, e.g. 0,500,1200.")
flags.DEFINE_string(
    "counts", None, "With --scores and a penalty: every farkle count, same "
    "order (default all 0).")
_JSON = flags.DEFINE_bool("json", False, "Print JSON instead of text.")
_ALLOW = flags.DEFINE_bool(
    "allow_unconverged", False, "Read a run that stopped at max_iterations "
    "above its tolerance.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if _T_MAX.value is not None and _T_MAX.value < 0:
    raise configuration.ConfigError(
        f"--t_max={_T_MAX.value}: expected a turn total of at least 0")
  if seat_game.is_seats_run(_WORKDIR.value):
    _seats_table()
    return
  command_line.refuse_seats_flags()
  w0, layout, roll, _ = results.load(_WORKDIR.value, _ALLOW.value)
  try:
    table = queries.turn_table(w0, layout, roll, _B.value, _D.value, _F.value,
                               _E.value, t_max=_T_MAX.value)
  except ValueError as e:
    raise configuration.ConfigError(str(e)) from None
  print(queries.to_json(table) if _JSON.value else queries.format_table(table))


def _seats_table():
  game = seat_game.SeatGame.load(_WORKDIR.value, _ALLOW.value)
  scores, counts = command_line.seats_position(game.seats.players)
  print(json.dumps(game.table(scores, counts, _T_MAX.value))
        if _JSON.value else
        seat_game.format_turn_table(game, scores, counts, _T_MAX.value))


if __name__ == "__main__":
  command_line.run(main, required=("workdir",))
