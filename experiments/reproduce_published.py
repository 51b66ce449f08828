"""Compares a solved `facebook` run with the published figures.

    python -m farkle_jax.main --config configs/facebook.py --workdir runs/facebook
    python experiments/reproduce_published.py --workdir runs/facebook

Prints the largest deviation from the published opening-turn table (every
value, every unreachable mark), the first player's win probability, the worked
example's option values and best choice, and the opening-turn bank thresholds.
The published figures come from tests/data/published.json (sources cited
there); the solver never reads them.
"""

from __future__ import annotations

import json
import os

from absl import app, flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import scoring
from farkle_jax.game.roll_tables import next_dice
from farkle_jax.solver import queries, results
from farkle_jax.strategy.solved_game import dice_count

PUBLISHED = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tests", "data", "published.json")


def roll_options(rules, roll, table):
  """(dice used, points, W after) of each best choice of an opening roll."""
  counts = tuple(roll.count(face) for face in range(1, 7))
  rows = {row["t"]: row for row in table["rows"]}
  out = []
  for k, pts in scoring.score_set(rules, counts):
    n = next_dice(len(roll), k)
    out.append((k, pts, rows[pts]["W"][str(n)]))
  return out


def bank_thresholds(table, step=50):
  """Per dice count, the lowest T such that banking is optimal in every
  reachable state of the table with turn total >= T ("bank at T or more")."""
  out = {}
  for n in table["rows"][0]["W"]:
    rolls = [row["t"] for row in table["rows"]
             if int(n) not in row["unreachable"] and row["action"][n] == "roll"]
    out[n] = max(rolls) + step if rolls else 0
  return out


def compare(workdir: str, published: dict) -> dict:
  """Computed vs published figures of the opening turn of a run."""
  w0, layout, roll, summary = results.load(workdir)
  fb = published["facebook"]
  sl = fb["opening_turn_slice"]
  table = queries.turn_table(w0, layout, roll, sl["b"], sl["d"], sl["f"],
                             sl["e"], t_max=sl["rows"][-1]["t"])
  rows = {row["t"]: row for row in table["rows"]}
  worst, where, marks = 0.0, None, 0
  for ref in sl["rows"]:
    got = rows[ref["t"]]
    marks += got["unreachable"] != ref["unreachable"]
    for n, w in ref["W"].items():
      dev = abs(got["W"][n] - w)
      if dev > worst:
        worst, where = dev, (ref["t"], n)
  ex = fb["worked_example"]
  options = roll_options(layout.rules, [6, 5, 3, 3, 3, 2], table)
  best = max(options, key=lambda o: o[2])
  return {
      "first_player_win": (summary["first_player_win"],
                           fb["first_player_win"]),
      "slice_max_abs_deviation": (worst, where),
      "slice_values_compared": sum(len(r["W"]) for r in sl["rows"]),
      "unreachable_mismatches": marks,
      "worked_example": [(k, pts, w) for k, pts, w in options],
      "worked_example_published": [(o["take"], o["to"], o["W"])
                                   for o in ex["options"]],
      "worked_example_best": best[:2],
      "bank_thresholds": bank_thresholds(table),
      "bank_thresholds_published": fb["opening_turn_bank_thresholds_by_n"],
      "iterations": summary["iterations"],
      "final_residual": summary["final_residual"],
      "norm": summary["norm"],
  }


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  with open(_PUBLISHED.value) as f:
    published = json.load(f)
  r = compare(_WORKDIR.value, published)
  got, ref = r["first_player_win"]
  print(f"first-player win: {got:.9f} (published {ref})")
  dev, where = r["slice_max_abs_deviation"]
  print(f"opening-turn table: {r['slice_values_compared']} values, max |dev| "
        f"{dev:.2e} at t={where[0]} n={where[1]}; unreachable marks differing:"
        f" {r['unreachable_mismatches']}")
  print("worked example (roll 6,5,3,3,3,2):")
  for (k, pts, w), (take, to, pw) in zip(r["worked_example"],
                                         r["worked_example_published"]):
    print(f"  use {dice_count(k):<6} for {pts:>4} -> W={w:.6f}   published: "
          f"{take} -> t={to['t']}, n={to['n']}: {pw}")
  k, pts = r["worked_example_best"]
  print(f"  best: use {dice_count(k)} for {pts}")
  print(f"bank thresholds by n: {r['bank_thresholds']}")
  print(f"        published:    {r['bank_thresholds_published']}")
  print(f"run: {r['iterations']} sweeps, {r['norm']} max change "
        f"{r['final_residual']:.2e}")


if __name__ == "__main__":
  _WORKDIR = flags.DEFINE_string("workdir", None,
                                 "Finished run of configs/facebook.py.")
  _PUBLISHED = flags.DEFINE_string("published", PUBLISHED,
                                   "The published figures (JSON).")
  command_line.run(main, required=("workdir",))
