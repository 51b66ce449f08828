"""Score-floor experiment: how much the floor L changes the solved model.

  python experiments/score_floor.py --config configs/facebook.py \
      --workdir runs/floors --floors=-2500,-3000

Solves the config at every floor (workdir/L<floor>, resumed when present),
then compares each pair of consecutive floors over the banked scores both
have: for every B, the largest relative deviation 2|w1 - w2| / (w1 + w2) over
all in-turn states with min(b, d) >= B, and, decision by decision (bank or
roll, and the chosen scoring of every roll), where the two strategies agree.
Writes floors.csv, decisions.csv, floors.png and floors.md to the workdir.
"""

from __future__ import annotations

import functools
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
import outputs
from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import bellman, checkpointing, driver


@functools.partial(jax.jit, static_argnames=("bank_min",))
def _compare(rows_a, rows_b, bank_a, bank_b, t_max, groups, bank_min):
  """Per key: largest relative deviation and decision differences.

  Args:
    rows_a, rows_b: [T + 1, 6, k] turn values of the two runs.
    bank_a, bank_b: [T + 1, k] value of banking t (1 - opponent's W0).
    t_max: [k] last non-terminal turn total.
    groups: tuple of ([R_j, j] option offsets, [R_j] dice of each row).
  """
  T1, _, k = rows_a.shape
  t = jnp.arange(T1)[:, None]
  live = t <= t_max[None]                                    # [T+1, k]
  dev = 2 * jnp.abs(rows_a - rows_b) / jnp.maximum(rows_a + rows_b, 1e-300)
  dev = jnp.where(live[:, None], dev, 0.0).max(axis=(0, 1))
  may = live & (t >= bank_min)
  ba = may[:, None] & (bank_a[:, None] >= rows_a)            # [T+1, 6, k]
  bb = may[:, None] & (bank_b[:, None] >= rows_b)
  bank_diff = (ba != bb).sum(axis=(0, 1))
  fa, fb = rows_a.reshape(T1 * N_DICE, k), rows_b.reshape(T1 * N_DICE, k)
  top = (T1 - 1) * N_DICE

  def body(tt, acc):
    for offs, dice in groups:
      idx = jnp.minimum(offs + tt * N_DICE, top + offs % N_DICE)
      ja, jb = fa[idx].argmax(axis=1), fb[idx].argmax(axis=1)  # [R_j, k]
      rolls = ~ba[tt][dice] & ~bb[tt][dice] & (tt <= t_max)[None]
      acc = acc + ((ja != jb) & rolls).sum(axis=0)
    return acc

  choice_diff = jax.lax.fori_loop(0, T1 - 1, body, jnp.zeros(k, jnp.int64))
  return dev, bank_diff, choice_diff


def compare_runs(run_a, run_b, batch: int = 2048):
  """Compares two solves of the same rules at different floors.

  Args:
    run_a, run_b: (w0, layout, roll) of each run.

  Returns:
    (scores [S] points, dev [S, S, F, E], diffs [S, S, F, E]) over the
    banked scores both runs have: the largest relative deviation of any
    in-turn state of each key, and its number of differing decisions.
  """
  (wa, la, roll), (wb, lb, _) = run_a, run_b
  low = max(la.rules.low, lb.rules.low)
  scores = np.arange(low, la.rules.goal, la.unit)
  S, F = len(scores), la.num_farkle
  b, d, f, e = np.meshgrid(np.arange(S), np.arange(S), np.arange(F),
                           np.arange(F), indexing="ij")
  b, d, f, e = (x.reshape(-1) for x in (b, d, f, e))
  # Rows 0 .. t_max of the lowest shared score, and one row of wins.
  num_rows = int(la.t_max(la.index_of(low))) + 2
  ra = bellman.roll_arrays(roll)
  dice = np.argmax(np.asarray(ra.set_weight) > 0, axis=0)
  groups, col = [], 0
  for g in ra.groups:
    n_rows = g.rows.shape[0]
    groups.append((g.rows, jnp.asarray(dice[col:col + n_rows])))
    col += n_rows
  groups = tuple(groups)
  # Each run: its values, layout, padded start vector and the index of the
  # lowest shared score.
  runs = [(w0, lay, lay.padded_start(w0), lay.index_of(low))
          for w0, lay in ((wa, la), (wb, lb))]
  out = [np.zeros(len(b)), np.zeros(len(b), np.int64)]
  start = time.time()
  for s in range(0, len(b), batch):
    sl = slice(s, s + batch)
    vals, banks = [], []
    for w0, lay, pad, first in runs:
      fields = (b[sl] + first, d[sl] + first, f[sl], e[sl])
      keys = lay.key_index(*fields)
      rows = bellman.turn_values(w0, keys, lay, roll)[:num_rows]
      banks.append(lay.bank_values(pad, fields, rows.shape[0]).T)
      vals.append(rows)
    T1 = min(v.shape[0] for v in vals)
    t_max = la.t_max(b[sl] + la.index_of(low))
    dev, bd, cd = _compare(*(jnp.asarray(v[:T1]) for v in vals),
                           *(jnp.asarray(x[:T1]) for x in banks),
                           jnp.asarray(t_max, jnp.int32), groups,
                           bank_min=la.bank_min)
    out[0][sl], out[1][sl] = np.asarray(dev), np.asarray(bd + cd)
    if s // batch % 50 == 0:
      logging.info("compared %d of %d keys (%.0f s)", min(s + batch, len(b)),
                   len(b), time.time() - start)
  shape = (S, S, F, F)
  return scores, out[0].reshape(shape), out[1].reshape(shape)


def corner_max(x: np.ndarray) -> np.ndarray:
  """[S, S] -> m[b, d] = max of x over b' >= b, d' >= d."""
  y = np.maximum.accumulate(x[::-1, ::-1], axis=0)
  return np.maximum.accumulate(y, axis=1)[::-1, ::-1]


def deviation_by_b(scores, dev):
  """[(B, largest relative deviation over keys with min(b, d) >= B)]."""
  m = corner_max(dev.max(axis=(2, 3)))
  return [(int(s), float(m[i, i])) for i, s in enumerate(scores)]


def identical_region(scores, dev, diffs):
  """Per farkle-count bound F: (smallest B such that all keys with
  min(b, d) >= B and max(f, e) <= F decide identically, the largest
  relative deviation there); B is None when no such region exists."""
  out = {}
  for fmax in range(dev.shape[2]):
    sub = diffs[:, :, :fmax + 1, :fmax + 1].max(axis=(2, 3)) > 0
    m = corner_max(sub.astype(np.int8))
    ok = np.nonzero(np.diagonal(m) == 0)[0]
    if len(ok) == 0:
      out[fmax] = (None, None)
      continue
    i = int(ok[0])
    inside = corner_max(dev[:, :, :fmax + 1, :fmax + 1].max(axis=(2, 3)))
    out[fmax] = (int(scores[i]), float(inside[i, i]))
  return out


def decay_per_500(curve, floor_noise: float = 1e-14) -> float:
  """Factor by which the deviation falls per 500 points (log-linear fit)."""
  x = np.array([b for b, v in curve if v > floor_noise], float)
  y = np.log10([v for b, v in curve if v > floor_noise])
  if len(x) < 2:
    return float("nan")
  slope = np.polyfit(x, y, 1)[0]
  return float(10 ** (-slope * 500))


def _plot(path, curves):
  plt = outputs.pyplot()
  fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
  for label, curve in curves:
    x = [b for b, v in curve if v > 0]
    ax.semilogy(x, [v for b, v in curve if v > 0], label=label)
  ax.set_xlabel("B: min(b, d) of the compared states (points)")
  ax.set_ylabel("max relative deviation")
  ax.set_title("Score floor: deviation between floors")
  ax.grid(True, which="both", alpha=0.3)
  ax.legend()
  outputs.save(fig, path)


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  floors = sorted((int(x) for x in _FLOORS.value), reverse=True)
  wd = _WORKDIR.value
  runs, md, csv_rows, dec_rows, curves = [], [], [], [], []
  t0 = time.time()
  for floor in floors:
    cfg = _CONFIG.value.copy_and_resolve_references()
    cfg.rules.floor = floor
    path = os.path.join(wd, f"L{floor}")
    run = driver.ensure(cfg, path)
    runs.append(run[:3])
    summary = run.summary
    win = summary["first_player_win"]
    md.append(f"- L = {floor}: first-player win {win:.9f}, "
              f"{summary['iterations']} sweeps (`python -m farkle_jax.main "
              f"--config {outputs.config_arg()} --workdir {path} "
              f"--config.rules.floor={floor}`)")
  md.append("")
  for (fa, ra), (fb, rb) in zip(zip(floors, runs), zip(floors[1:], runs[1:])):
    t1 = time.time()
    scores, dev, diffs = compare_runs(ra, rb, _BATCH.value)
    curve = deviation_by_b(scores, dev)
    label = f"L={fa} vs L={fb}"
    curves.append((label, curve))
    csv_rows += [f"{fa},{fb},{b},{v:.6e}" for b, v in curve]
    region = identical_region(scores, dev, diffs)
    tol = float(_CONFIG.value.solver.tol)
    rate = decay_per_500(curve, floor_noise=10 * tol)
    md += [f"## {label}", "",
           f"Compared {dev.size:,} start-of-turn keys (all their in-turn "
           f"states) in {time.time() - t1:.0f} s. Largest relative deviation "
           f"over all of them: {dev.max():.3e}; at min(b, d) >= 0: "
           f"{dict(curve)[0]:.3e}. Above 10x the solve tolerance ({10 * tol:g}; "
           f"below it the deviation is convergence noise) it falls by a "
           f"factor of {rate:.1f} per 500 points of B (log-linear fit).", "",
           f"States with differing decisions: {int((diffs > 0).sum()):,} "
           f"keys, {int(diffs.sum()):,} decisions.", "",
           "| max farkle count | identical for min(b, d) >= | largest "
           "relative deviation there |", "|---|---|---|"]
    for fmax, (bmin, devmax) in region.items():
      md.append(f"| {fmax} | {bmin} | "
                f"{'-' if devmax is None else f'{devmax:.3e}'} |")
      dec_rows.append(f"{fa},{fb},{fmax},{bmin},{devmax}")
    md.append("")
  outputs.write_csv(os.path.join(wd, "floors.csv"),
                    "floor_a,floor_b,B,max_relative_deviation", csv_rows)
  outputs.write_csv(os.path.join(wd, "decisions.csv"),
                    "floor_a,floor_b,max_farkle_count,identical_from_B,max_dev",
                    dec_rows)
  _plot(os.path.join(wd, "floors.png"), curves)
  head = ["# Score floor experiment", "",
          outputs.command_line(time.time() - t0,
                               "solves included when not resumed"), "",
          "Figure: floors.png; data: floors.csv, decisions.csv.", ""]
  outputs.write_report(os.path.join(wd, "floors.md"), head + md)


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
  _WORKDIR = flags.DEFINE_string("workdir", None, "Experiment directory.")
  _FLOORS = flags.DEFINE_list("floors", ["-2500", "-3000"], "Floors L.")
  _BATCH = flags.DEFINE_integer("batch", 2048, "Keys per batch.")
  command_line.run(main, required=("config", "workdir"))
