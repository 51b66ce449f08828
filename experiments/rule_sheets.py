"""The named rule sheets side by side: first-player win probability, the
fairest komi and the opening turn of each.

  python experiments/rule_sheets.py --workdir runs \
      --sheets=facebook,minimal,zilch,cardgames_io,playmonster

Solves the shipped config <sheet> in workdir/<sheet> (a finished run is loaded,
an unfinished one resumed), then writes rule_sheets.md and .json and every
opening-turn table (opening_<sheet>.txt) to --out.
"""

from __future__ import annotations

import importlib
import os
import time

from absl import app, flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax import configs
import outputs
from farkle_jax.apps import command_line
from farkle_jax.solver import driver, queries
from farkle_jax.strategy import komi
from reproduce_published import bank_thresholds


def bank_from(table: dict, step: int) -> dict[str, int]:
  """Per dice count, the turn total from which banking is optimal in every
  reachable state ("bank at T or more"; where every reachable state banks,
  the smallest reachable one)."""
  out = bank_thresholds(table, step)
  for n, t in out.items():
    if t == 0:
      out[n] = min(row["t"] for row in table["rows"]
                   if int(n) not in row["unreachable"]
                   and row["action"][n] == "bank")
  return out

_WORKDIR = flags.DEFINE_string("workdir", None, "Where the runs are.")
_SHEETS = flags.DEFINE_list(
    "sheets", ["facebook", "minimal", "zilch", "cardgames_io", "playmonster"],
    "Shipped config names (`farkle --help` lists them).")
_OUT = flags.DEFINE_string("out", "experiments/results/rule_sheets",
                           "Where the tables go.")


def sheet(name: str, workdir: str) -> dict:
  config = importlib.import_module(f"farkle_jax.configs.{name}").get_config()
  start = time.time()
  run = driver.ensure(config, os.path.join(workdir, name))
  lay, rules = run.layout, run.layout.rules
  k, w_k = komi.fairest(komi.komi(run.w0, lay, 1000))
  table = queries.turn_table(run.w0, lay, run.roll, 0, 0, 0, 0)
  return {"sheet": name, "first_player_win": float(run.w0[lay.opening_key()]),
          "komi": k, "first_player_win_with_komi": w_k,
          "bank_from": bank_from(table, lay.unit),
          "model_states": lay.num_states,
          "solve_seconds": run.summary.get("wall_seconds_this_process"),
          "loaded_in_seconds": time.time() - start,
          "rules": rules.to_dict(), "table": queries.format_table(table)}


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  known = configs.names()
  for name in _SHEETS.value:
    if name not in known:
      raise app.UsageError(f"--sheets: no config named {name!r}; one of "
                           f"{', '.join(known)}")
  os.makedirs(_OUT.value, exist_ok=True)
  found = [sheet(name, _WORKDIR.value) for name in _SHEETS.value]
  lines = ["# Rule sheets", "", outputs.command_line(), "",
           "| rules | first player wins | fairest komi (first player then) "
           "| opening turn: bank from t = (n = 6, 5, 4, 3, 2, 1) |",
           "|---|---|---|---|"]
  for f in found:
    banks = ", ".join(str(f["bank_from"][str(n)]) for n in range(6, 0, -1))
    lines.append(f"| `{f['sheet']}` | {f['first_player_win']:.9f} | "
                 f"{f['komi']} ({f['first_player_win_with_komi']:.6f}) | "
                 f"{banks} |")
    with open(os.path.join(_OUT.value, f"opening_{f['sheet']}.txt"), "w") as h:
      h.write(f.pop("table") + "\n")
  outputs.write_json(os.path.join(_OUT.value, "rule_sheets.json"), found)
  outputs.write_report(os.path.join(_OUT.value, "rule_sheets.md"), lines)


if __name__ == "__main__":
  command_line.run(main, required=("workdir",))
