"""Where-to-roll experiment: the optimal roll/bank boundary over (b, d).

  python experiments/where_to_roll.py --config configs/minimal.py \
      --workdir runs/minimal

For every start-of-turn key with no farkles (b, d) and every n = 1..6, the
set of turn totals t where rolling is optimal. It is summarized by the bank
threshold: the smallest bankable t where banking is optimal (none: the
player rolls on until winning, "go for it"), and whether rolling becomes
optimal again above it. Solves the config in --workdir first (resuming).
Writes where_to_roll.csv, where_to_roll.png and where_to_roll.md there.
"""

from __future__ import annotations

import os
import time

import numpy as np
from absl import flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
import outputs
from farkle_jax.solver import checkpointing, driver
from farkle_jax.strategy import policies


def thresholds(w0, layout, roll, batch: int = 2048):
  """Bank thresholds of the optimal strategy at keys (b, d, 0, 0).

  Returns:
    (first [S, S, 6] points, -1 where it never banks short of winning;
     again [S, S, 6] bool, rolling optimal at some larger non-winning t).
  """
  S = layout.num_scores
  opt = policies.optimal(w0, layout, roll)
  b, d = np.meshgrid(np.arange(S), np.arange(S), indexing="ij")
  keys = layout.key_index(b.ravel(), d.ravel(), 0, 0)
  first = np.full((len(keys), 6), -1)
  again = np.zeros((len(keys), 6), bool)
  T1 = layout.num_rows + 1
  t = np.arange(T1)
  for s in range(0, len(keys), batch):
    k = keys[s:s + batch]
    _, bank = opt.policy(k)                                # [k, T+1, 6]
    t_max = layout.t_max(b.ravel()[s:s + batch])
    live = (t[None] <= t_max[:, None]) & (t[None] >= layout.bank_min)
    bank = bank & live[..., None]
    has = bank.any(axis=1)                                 # [k, 6]
    idx = np.argmax(bank, axis=1)                          # [k, 6]
    first[s:s + batch] = np.where(has, idx * layout.unit, -1)
    above = t[None, :, None] > idx[:, None, :]
    again[s:s + batch] = (has & (live[..., None] & ~bank & above).any(1))
  return first.reshape(S, S, 6), again.reshape(S, S, 6)


def csv_rows(scores, first, again):
  """One CSV row per (b, d, n): scores in points, the bank threshold (empty
  where the player goes for it) and whether rolling is optimal again."""
  S = len(scores)
  for i in range(S):
    for j in range(S):
      for n in range(1, 7):
        v = first[i, j, n - 1]
        yield (f"{scores[i]},{scores[j]},{n},{'' if v < 0 else v},"
               f"{int(again[i, j, n - 1])}")


def _plot(path, first, layout):
  plt = outputs.pyplot()
  goal = layout.rules.goal
  fig, axes = plt.subplots(2, 3, figsize=(12, 7.2), dpi=72)
  cmap = plt.get_cmap("viridis").copy()
  cmap.set_bad("white")
  extent = (layout.rules.low, goal, layout.rules.low, goal)
  for ax, n in zip(axes.ravel(), range(6, 0, -1)):
    data = np.ma.masked_less(first[:, :, n - 1].astype(float), 0)
    im = ax.imshow(data.T, origin="lower", extent=extent, cmap=cmap,
                   vmin=0, vmax=np.percentile(first[first >= 0], 99),
                   interpolation="nearest")
    ax.set_title(f"n = {n}: bank from t (white: go for it)", fontsize=9)
    ax.set_xlabel("own banked score b")
    ax.set_ylabel("opponent's banked score d")
    fig.colorbar(im, ax=ax, shrink=0.8)
  fig.suptitle(f"{layout.rules.name}: smallest turn total at which banking "
               "is optimal")
  outputs.save(fig, path)


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  wd = _WORKDIR.value
  t0 = time.time()
  w0, layout, roll, _ = driver.ensure(_CONFIG.value, wd)
  first, again = thresholds(w0, layout, roll)
  S = layout.num_scores
  scores = layout.points(np.arange(S))
  outputs.write_csv(os.path.join(wd, "where_to_roll.csv"),
                    "b,d,n,bank_from,rolls_again_above",
                    csv_rows(scores, first, again))
  _plot(os.path.join(wd, "where_to_roll.png"), first, layout)
  b0, d0, _, _ = layout.opening_key()
  md = ["# Where to roll", "",
        outputs.command_line(time.time() - t0), "",
        "Figure: where_to_roll.png (one panel per n; colour: the smallest "
        "turn total where banking is optimal; white: never bank short of "
        "winning). Data: where_to_roll.csv.", "",
        "| n | bank from t at b = d = 0 | keys (b, d) that go for it | keys "
        "where rolling is optimal again above the threshold |",
        "|---|---|---|---|"]
  for n in range(6, 0, -1):
    md.append(f"| {n} | {first[b0, d0, n - 1]} | "
              f"{int((first[:, :, n - 1] < 0).sum()):,} | "
              f"{int(again[:, :, n - 1].sum()):,} |")
  md.append("")
  for n in range(6, 0, -1):
    go = first[:, :, n - 1] < 0
    at_b0 = scores[go[b0]]
    at_d0 = scores[go[:, d0]]
    md.append(f"- n = {n}: go for it at b = 0 from d = "
              f"{at_b0.min() if len(at_b0) else 'never'}; at d = 0 from "
              f"b = {at_d0.min() if len(at_d0) else 'never'}")
  outputs.write_report(os.path.join(wd, "where_to_roll.md"), md)


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
  _WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
  command_line.run(main, required=("config", "workdir"))
