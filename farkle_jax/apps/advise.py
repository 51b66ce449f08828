"""What to keep and whether to roll on, for a position and a roll.

    python -m farkle_jax.apps.advise --b 0 --d 0 --roll 6,5,3,3,3,2
    python -m farkle_jax.apps.advise --workdir W --b 500 --d 1200 --t 350 --n 2
    python -m farkle_jax.apps.advise --shipped default --b 0 --d 0 --roll 1,1,5 \
        --t 650 --n 3 --json
    python -m farkle_jax.apps.advise --workdir W3 --scores 0,500,1200 --roll 1,5,3,3,3,2

With a roll: every legal way to set dice aside (dice kept, points, the turn
total and dice left after it, the win probability when play goes on
optimally), best first, then bank or roll after the best one. Without a
roll: bank or roll at the position, with both win probabilities. Without
--workdir the solved values shipped with the package answer (--shipped).
"""

import json

from absl import app, flags

import farkle_jax  # (also enables float64)
from farkle_jax.apps import command_line
from farkle_jax.strategy import positions, seat_game, solved_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run "
                               "(default: the shipped values, --shipped).")
_SHIPPED = flags.DEFINE_enum("shipped", "facebook", solved_game.SHIPPED,
                             "Shipped solved values to use without --workdir.")
_B, _D, _F, _E = command_line.define_key_flags()
_T = flags.DEFINE_integer("t", 0, "Turn total so far.")
_N = flags.DEFINE_integer("n", 6, "Dice to roll (default: 6, or with "
                         "--roll the dice it shows; given, the roll must "
                         "show that many).")
_ROLL = flags.DEFINE_string("roll", None, "The dice rolled, e.g. 6,5,3,3,3,2 "
                            "(none: bank or roll at the position).")
command_line.define_scores_flags()
_JSON = flags.DEFINE_bool("json", False, "Print JSON instead of text.")
_ALLOW = flags.DEFINE_bool("allow_unconverged", False, "Read a run that "
                           "stopped at max_iterations above its tolerance.")


def format_decision(where: str, dec: solved_game.Decision, bank_min: int) -> str:
  if dec.roll is None:
    return f"{where}: bank, and win the game"
  if dec.bank is None:
    return (f"{where}: roll (win probability {dec.roll:.6f}); banking is "
            f"not allowed below {bank_min}")
  return (f"{where}: {dec.best} (bank {dec.bank:.6f}, roll {dec.roll:.6f})")


def format_advice(adv: solved_game.Advice, bank_min: int,
                  game: solved_game.SolvedGame | None = None) -> str:
  """The advice as text (`game` names the dice states where dice differ)."""
  words = game.dice_words if game else solved_game.dice_count
  label = game.dice_label if game else str
  p = adv.position
  lines = [f"b={p.b} d={p.d} f={p.f} e={p.e}, turn total {p.t}, rolled "
           f"{words(p.n)}: {','.join(map(str, adv.roll))}"]
  if not adv.choices:
    lines.append(f"farkle: nothing scores; the turn ends with nothing "
                 f"banked (win probability {adv.farkle:.6f})")
    return "\n".join(lines)
  lines.append(f"  {'keep':<14}{'points':>7}{'turn total':>12}"
               f"{'dice left':>11}{'win probability':>17}")
  for i, c in enumerate(adv.choices):
    kept = " ".join(map(str, c.kept))
    note = "  best" if i == 0 else ""
    win = f"{c.win:.6f}" if not c.wins_now else "1 (bank: wins)"
    lines.append(f"  {kept:<14}{c.points:>7}{c.t:>12}{label(c.n):>11}"
                 f"{win:>17}"
                 f"{note}")
  best = adv.choices[0]
  dice = words(best.n)
  lines.append(format_decision(f"then, at t={best.t} with {dice}",
                               adv.decision, bank_min))
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  roll = positions.parse_dice(_ROLL.value) if _ROLL.value is not None else None
  game = farkle_jax.load(_WORKDIR.value, _SHIPPED.value, _ALLOW.value)
  if command_line.by_scores(game.players):
    print(_advice_by_scores(game, roll))
    return
  pos = solved_game.Position(_B.value, _D.value, _F.value, _E.value, _T.value,
                             _n_given(game, roll))
  bank_min = game.bank_minimum(pos.b, pos.b_on)
  if roll is None:
    dec = game.decision(pos)
    print(json.dumps({"position": pos._asdict(), **dec.as_dict()}, indent=1)
          if _JSON.value else format_decision(
              f"b={pos.b} d={pos.d} f={pos.f} e={pos.e}, t={pos.t} with "
              f"{solved_game.dice_count(pos.n)}", dec, bank_min))
    return
  adv = (game.advise(game.as_given(pos), roll, dice_state=True)
         if _N.present else game.advise(pos, roll))
  print(json.dumps(adv.as_dict(), indent=1) if _JSON.value
        else format_advice(adv, bank_min, game))


def _n_given(game, roll) -> int:
  """--n, or without it the dice the roll shows (where the dice differ,
  the roll names its dice state itself)."""
  if _N.present or roll is None or not game.rules.dice_alike:
    return _N.value
  return len(roll) if 1 <= len(roll) <= 6 else _N.value


def _advice_by_scores(game, roll) -> str:
  """Advice for every player's score (any number of players): each value
  a vector over the players, the mover's first."""
  scores, counts = command_line.seats_position(game.players)
  n = _N.value if _N.present else None
  if _JSON.value:
    return json.dumps(farkle_jax.advise(game, scores, roll, _T.value, n,
                                        counts))
  if roll is not None:
    return seat_game.format_advice(game, scores, _T.value, roll, counts, n)
  d = farkle_jax.advise(game, scores, None, _T.value, n, counts)
  bank = seat_game.format_vector(d["bank"]) if d["bank"] else "not allowed"
  roll_on = (seat_game.format_vector(d["roll"]) if d["roll"]
             else "not needed: banking wins")
  return (f"scores {','.join(map(str, scores))}, t={_T.value} with "
          f"{solved_game.dice_count(_N.value)}: {d['best']} (bank {bank}; "
          f"roll {roll_on})")


if __name__ == "__main__":
  command_line.run(main)
