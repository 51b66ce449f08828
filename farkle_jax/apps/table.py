"""Turn table of a finished run for any start-of-turn state.

    farkle table --workdir W --b 0 --d 0
    farkle table --workdir W --b 500 --d 1200 --f 1 --e 0 --t_max 1000
    farkle table --workdir W --b 0 --d 0 --json
    farkle table --workdir W --b 0 --d 0 --plot table.png
    farkle table --workdir W3 --scores 0,500,1200
    farkle table --workdir W3 --scores 0,500,1200 --plot table.png
    python -m farkle_jax.apps.table --workdir W --b 0 --d 0

Rows are turn totals t, columns n = 6..1 dice to roll; each cell holds the
win probability of the player to move, 'B' after it where banking is best
(rolling otherwise), and '-' for states no sequence of rolls reaches.
--scores (every player's banked score, the mover first) takes a run of any
number of players; --plot also draws the table as a heat map.
"""

import json

from absl import app, flags

import farkle_jax  # (also enables float64)
from farkle_jax.apps import command_line, plots
from farkle_jax.solver import queries
from farkle_jax.strategy import positions, seat_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run.")
_B, _D, _, _ = command_line.define_key_flags()  # --f, --e: key_fields
_T_MAX = flags.DEFINE_integer(
    "t_max", None, "Last turn total to list (default: where every n banks; "
    "3,000 for more than two players).")
command_line.define_scores_flags()
_JSON = flags.DEFINE_bool("json", False, "Print JSON instead of text.")
_PLOT = flags.DEFINE_string(
    "plot", None, "Also draw the table as a heat map to this file (.png, "
    ".pdf, .svg, ...; its directory must exist).")
_ALLOW = flags.DEFINE_bool(
    "allow_unconverged", False, "Read a run that stopped at max_iterations "
    "above its tolerance.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  plots.check_path(_PLOT.value)
  game = farkle_jax.load(_WORKDIR.value, allow_unconverged=_ALLOW.value)
  positions.check_t_last(game.rules, _T_MAX.value, "--t_max")
  if command_line.by_scores(game.players):
    _table_by_scores(game)
    return
  f, e = command_line.key_fields(game.rules)
  table = game.turn_table(_B.value, _D.value, f, e, _T_MAX.value)
  print(queries.to_json(table) if _JSON.value else queries.format_table(table))
  _draw(table, "turn table " + game.layout.key_words(_B.value, _D.value,
                                                      f, e))


def _table_by_scores(game):
  """The mover's turn table by every player's score (any number of
  players): each cell bank or roll, and every player's win probability."""
  scores, counts = command_line.seats_position(game.players, game.rules)
  table = game.table(scores, counts, _T_MAX.value)
  print(json.dumps(table) if _JSON.value else
        seat_game.format_table(table))
  _draw(table, f"turn table at scores {','.join(map(str, scores))} "
        "(player to move first)")


def _draw(table: dict, title: str) -> None:
  """The heat map of `table` to --plot, when given."""
  if _PLOT.value is None:
    return
  plots.save(plots.turn_table(table, title), _PLOT.value)
  if not _JSON.value:
    print(f"plot: {_PLOT.value}")


def cli() -> None:
  """The command (`farkle table`)."""
  command_line.run(main, required=("workdir",))


if __name__ == "__main__":
  cli()
