"""What loaded dice are worth: a hand with k dice of one kind from the
catalog (the rest fair) against six fair dice, on a rule sheet.

  python experiments/dice_worth.py --workdir runs/dice_worth \
      --config configs/kcd.py --die lucky --counts 0,1,2,3,6

For each k one solve with rules.hands = (six fair dice, the k-die hand)
gives every match-up; the table holds the k-die hand's maximum expected
score per turn and farkle rate (one turn on its own), and its win
probability against the fair hand moving first, moving second and on
average (who starts is a coin toss). Writes dice_worth_<die>.md and .json
to --out.
"""

from __future__ import annotations

import json
import os
import sys
import time

from absl import app, flags
from ml_collections import config_flags

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import farkle_jax  # noqa: F401,E402  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import dice
from farkle_jax.solver import configuration, driver
from farkle_jax.strategy import expected_score

_CONFIG = config_flags.DEFINE_config_file("config", "configs/kcd.py",
                                          "The rule sheet.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Where the runs go.")
_DIE = flags.DEFINE_string("die", "lucky", "A die of the catalog "
                           "(farkle_jax/data/dice.json).")
_COUNTS = flags.DEFINE_list("counts", ["0", "1", "2", "3", "6"],
                            "How many of the die in the hand, 0..6.")
_OUT = flags.DEFINE_string("out", "experiments/results/dice_worth",
                           "Where the table goes.")


def _check() -> list[int]:
  if _DIE.value not in dice.catalog():
    raise app.UsageError(f"--die: {_DIE.value!r} is not in the catalog: "
                         f"{', '.join(sorted(dice.catalog()))}")
  try:
    counts = [int(x) for x in _COUNTS.value]
  except ValueError:
    counts = [-1]
  if not counts or any(not 0 <= k <= 6 for k in counts):
    raise app.UsageError(f"--counts: numbers of dice from 0 to 6, got "
                         f"{','.join(_COUNTS.value)}")
  rules = configuration.check(_CONFIG.value)[0]
  if rules.players != 2 or rules.penalty or rules.final_round:
    raise app.UsageError("--config: two players, no farkle penalty and no "
                         "final round (rules.hands needs them)")
  return counts


def row(k: int) -> dict:
  """The k-die hand against six fair dice."""
  hand = (_DIE.value,) * k
  config = _CONFIG.value.copy_and_resolve_references()
  config.rules.hands = ((), hand)
  config.rules.dice = ()
  start = time.time()
  run = driver.ensure(config, os.path.join(_WORKDIR.value, f"{_DIE.value}"
                                           f"_{k}"))
  w0, lay = run.w0, run.layout
  first = float(w0[lay.opening_key()[:2] + (1, 0)])
  second = 1 - float(w0[lay.opening_key()[:2] + (0, 1)])
  alone = lay.rules.replace(hands=(), dice=hand)
  turn = expected_score.solve(alone)
  return {"dice": k, "points_per_turn": turn.points_per_turn(),
          "farkle_rate": turn.farkle_rate(), "win_first": first,
          "win_second": second, "win_average": (first + second) / 2,
          "fair_first": float(w0[lay.opening_key()[:2] + (0, 0)]),
          "model_states": lay.num_states,
          "solve_seconds": run.summary.get("wall_seconds_this_process"),
          "seconds_this_run": time.time() - start}


def table(rows: list[dict], goal: int) -> str:
  head = (f"| {_DIE.value} dice in the hand | points per turn | farkle "
          "rate | wins moving first | wins moving second | wins on average "
          "|\n|---|---|---|---|---|---|")
  lines = [head] + [
      f"| {r['dice']} | {r['points_per_turn']:.2f} | {r['farkle_rate']:.4f} "
      f"| {r['win_first']:.4f} | {r['win_second']:.4f} | "
      f"{r['win_average']:.4f} |" for r in rows]
  die = dice.catalog()[_DIE.value]
  wild = (f" (its {die['wild']} a devil's head: a joker in any "
          "combination, never scoring alone)" if "wild" in die else "")
  return (f"Against six fair dice, to {goal} points; the {die['name']} "
          f"shows 1..6 with chances {', '.join(die['chances'])}{wild}:\n\n"
          + "\n".join(lines) + "\n")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  counts = _check()
  rows = []
  for i, k in enumerate(counts):
    rows.append(row(k))
    print(f"[{i + 1}/{len(counts)}] {k} {_DIE.value} dice: win "
          f"{rows[-1]['win_average']:.4f} on average, "
          f"{rows[-1]['points_per_turn']:.2f} points per turn "
          f"({rows[-1]['seconds_this_run']:.1f} s)", flush=True)
  goal = configuration.check(_CONFIG.value)[0].goal
  text = table(rows, goal)
  print(text)
  os.makedirs(_OUT.value, exist_ok=True)
  base = os.path.join(_OUT.value, f"dice_worth_{_DIE.value}")
  with open(base + ".md", "w") as f:
    f.write(text)
  with open(base + ".json", "w") as f:
    json.dump(rows, f, indent=1)


if __name__ == "__main__":
  command_line.run(main, required=("workdir",))
