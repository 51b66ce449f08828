"""Final-round cap experiment: how much the cap on a leader's turn total
past the goal changes the solved model.

  python experiments/final_round_cap.py --config configs/playmonster.py \
      --workdir runs/final_round_cap --caps=1000,2000,4000,8000

Solves the config at every cap (workdir/cap<points>, resumed when present)
and compares consecutive caps over every start-of-turn key: the largest
change of W0, where it is, and the change of the first player's W0 at the
start. Writes caps.csv, caps.png and caps.md to the workdir.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from absl import app, flags
from ml_collections import config_flags

# Configs import each other (`from configs import facebook`): the
# repository root must be importable, as it is for `python -m`.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import farkle_jax  # noqa: F401,E402  (float64)
import outputs
from farkle_jax.apps import command_line
from farkle_jax.solver import driver

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "A config with rules.final_round = True.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Where the runs go.")
_CAPS = flags.DEFINE_list("caps", ["1000", "2000", "4000", "8000"],
                          "Caps past the goal, points, increasing.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  config = _CONFIG.value
  if not config.rules.final_round:
    raise app.UsageError("--config: the rules need final_round = True")
  caps = sorted(int(c) for c in _CAPS.value)
  start = time.time()
  runs = []
  for cap in caps:
    c = config.copy_and_resolve_references()
    c.rules.final_round_cap = cap
    runs.append(driver.ensure(c, os.path.join(_WORKDIR.value, f"cap{cap}")))
  layout = runs[0].layout
  rows, lines = [], [
      f"# Final-round cap: {layout.rules.name}, goal {layout.rules.goal}", "",
      outputs.command_line(time.time() - start), "",
      "| cap | W0 at the start | change from the previous cap: at the start"
      " | largest over all keys | where (b, d) |", "|---|---|---|---|---|"]
  for i, (cap, run) in enumerate(zip(caps, runs)):
    w = run.w0[layout.opening_key()]
    if i == 0:
      rows.append(f"{cap},{w:.12f},,,")
      lines.append(f"| {cap} | {w:.9f} | | | |")
      continue
    diff = np.abs(run.w0 - runs[i - 1].w0)
    at = np.unravel_index(np.argmax(diff), diff.shape)
    where = tuple(int(layout.points(x)) for x in at[:2])
    start_change = abs(w - runs[i - 1].w0[layout.opening_key()])
    rows.append(f"{cap},{w:.12f},{start_change:.3e},{diff.max():.3e},"
                f"{where[0]}:{where[1]}")
    lines.append(f"| {cap} | {w:.9f} | {start_change:.2e} | "
                 f"{diff.max():.2e} | {where} |")
  outputs.write_csv(os.path.join(_WORKDIR.value, "caps.csv"),
                    "cap,w0_start,start_change,max_change,where", rows)
  plt = outputs.pyplot()
  fig, ax = plt.subplots(figsize=(6, 4))
  changes = [float(r.split(",")[3]) for r in rows[1:]]
  starts = [float(r.split(",")[2]) for r in rows[1:]]
  ax.semilogy(caps[1:], changes, "o-", label="largest over all keys")
  ax.semilogy(caps[1:], [max(s, 1e-17) for s in starts], "s-",
              label="first player at the start")
  ax.set_xlabel("cap past the goal (points)")
  ax.set_ylabel("|W0 change| from the previous cap")
  ax.legend()
  outputs.save(fig, os.path.join(_WORKDIR.value, "caps.png"))
  outputs.write_report(os.path.join(_WORKDIR.value, "caps.md"), lines)


if __name__ == "__main__":
  command_line.run(main, required=("config", "workdir"))
