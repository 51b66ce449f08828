"""Every die of the catalog on a rule sheet, one turn alone: the maximum
expected score and farkle rate of a hand with one such die and five fair
ones, and with two and four. (Six alike of some dice rarely farkle: their
best turn rolls on to totals far past any goal, so none is listed.)

  python experiments/dice_catalog.py --config configs/kcd.py

Writes dice_catalog.md (the table, by game, then by points with one die)
and dice_catalog.json to --out.
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
from farkle_jax.solver import configuration
from farkle_jax.strategy import expected_score

_CONFIG = config_flags.DEFINE_config_file("config", "configs/kcd.py",
                                          "The rule sheet.")
_OUT = flags.DEFINE_string("out", "experiments/results/dice_catalog",
                           "Where the table goes.")


def row(rules, name: str) -> dict:
  """One die of the catalog: one or two of it, the other dice fair."""
  out = {"die": name, **{k: dice.catalog()[name][k]
                         for k in ("name", "game", "printed")}}
  for label, hand in (("one", (name,)), ("two", (name,) * 2)):
    turn = expected_score.solve(rules.replace(dice=hand))
    out[f"{label}_points"] = turn.points_per_turn()
    out[f"{label}_farkle"] = turn.farkle_rate()
  return out


def table(rows: list[dict], fair: dict, sheet: str) -> str:
  lines = [f"One turn alone on the {sheet} sheet, maximum expected score "
           f"(six fair dice: {fair['one_points']:.2f} points, P(farkle) "
           f"{fair['one_farkle']:.4f}); faces 1..6 in percent as the "
           "sources print them; * its 1 is a devil's head (a joker)\n",
           "| game | die | faces 1..6 (%) | one die + five fair: points | "
           "P(farkle) | two + four fair: points | P(farkle) |",
           "|---|---|---|---|---|---|---|"]
  for r in rows:
    wild = "*" if "wild" in dice.catalog()[r["die"]] else ""
    game = "KCD II" if r["game"].endswith("II") else "KCD"
    lines.append(
        f"| {game} | `{r['die']}`{wild} | "
        f"{' / '.join(f'{x:g}' for x in r['printed'])} | "
        f"{r['one_points']:.2f} | {r['one_farkle']:.4f} | "
        f"{r['two_points']:.2f} | {r['two_farkle']:.4f} |")
  return "\n".join(lines) + "\n"


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  rules = configuration.check(_CONFIG.value)[0]
  if rules.players != 2 or rules.nothing_roll:
    raise app.UsageError("--config: a two-player sheet without "
                         "rules.nothing_roll (the devil's head has no "
                         "meaning there)")
  names = sorted(dice.catalog(), key=lambda n: (
      dice.catalog()[n]["game"], n))
  fair = expected_score.solve(rules.replace(dice=()))
  fair = {"one_points": fair.points_per_turn(),
          "one_farkle": fair.farkle_rate()}
  rows, start = [], time.time()
  for i, name in enumerate(names, start=1):
    rows.append(row(rules, name))
    left = (time.time() - start) / i * (len(names) - i)
    print(f"[{i}/{len(names)}] {name}: {rows[-1]['one_points']:.2f} "
          f"points with one, eta {left:.0f} s", flush=True)
  rows.sort(key=lambda r: (r["game"], -r["one_points"]))
  text = table(rows, fair, rules.name)
  print(text)
  os.makedirs(_OUT.value, exist_ok=True)
  base = os.path.join(_OUT.value, "dice_catalog")
  with open(base + ".md", "w") as f:
    f.write(text)
  with open(base + ".json", "w") as f:
    json.dump({"rules": rules.name, "fair": fair, "dice": rows}, f,
              indent=1)


if __name__ == "__main__":
  command_line.run(main)
