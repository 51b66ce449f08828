"""Goal-score experiment: win-probability vs maximum-expected-score ordering.

  python experiments/goal_preference.py --config configs/minimal.py \
      --workdir runs/goals --goals=5000,10000,20000,30000

For each goal, solves the rules (workdir/goal<g>, resumed when present) and
ranks the turn states (t, n) of the opening turn (b = d = 0, no farkles) that
a roll can lead to (0 < t <= --t_last) by win probability W and by the
maximum expected score T(n, t) of the turn. A discrepancy is a pair of
states the two orderings rank in opposite directions (W and T differ
strictly). Writes goals.csv (counts), discrepancies.csv (all pairs),
goals.png and goals.md.
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
from farkle_jax.solver import bellman, checkpointing, driver, queries
from farkle_jax.strategy import expected_score


def opening_states(w0, layout, roll, t_last: int):
  """[(t points, n, W, T)] of the reachable opening-turn states, t > 0."""
  opening = layout.opening_key()
  key = layout.key_index(*opening)
  rows = bellman.turn_values(w0, np.array([key]), layout, roll)[..., 0]
  reach = queries.reachable(layout, roll, opening[0])
  sol = expected_score.solve(layout.rules, roll)
  out = []
  for t in range(1, min(t_last // layout.unit, layout.num_rows - 1) + 1):
    for n in range(1, 7):
      if reach[t, n - 1]:
        out.append((t * layout.unit, n, float(rows[t, n - 1]),
                    float(sol.expected[t, n - 1])))
  return out


def discrepancies(states, tol: float = 1e-12):
  """Pairs ((t1, n1), (t2, n2)) with W1 > W2 but T1 < T2."""
  out = []
  for i, (t1, n1, w1, v1) in enumerate(states):
    for t2, n2, w2, v2 in states[i + 1:]:
      dw, dv = w1 - w2, v1 - v2
      if abs(dw) > tol and abs(dv) > tol and dw * dv < 0:
        a, b = ((t1, n1, w1, v1), (t2, n2, w2, v2))
        if dw < 0:
          a, b = b, a
        out.append((a, b))
  return out


def _plot(path, counts):
  plt = outputs.pyplot()
  fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
  goals = [g for g, _, _ in counts]
  ax.plot(goals, [c for _, c, _ in counts], "o-")
  ax.set_xlabel("goal score")
  ax.set_ylabel("discordant state pairs")
  ax.set_title("W ordering vs max expected score (opening turn)")
  ax.grid(True, alpha=0.3)
  outputs.save(fig, path)


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  wd = _WORKDIR.value
  t0 = time.time()
  counts, md_lists, rows = [], [], []
  for g in sorted(int(x) for x in _GOALS.value):
    cfg = _CONFIG.value.copy_and_resolve_references()
    cfg.rules.goal = g
    path = os.path.join(wd, f"goal{g}")
    w0, layout, roll, summary = driver.ensure(cfg, path)
    states = opening_states(w0, layout, roll, _T_LAST.value)
    pairs = discrepancies(states)
    counts.append((g, len(pairs), len(states)))
    for a, b in pairs:
      rows.append(f"{g},{a[0]},{a[1]},{a[2]:.9f},{a[3]:.4f},"
                  f"{b[0]},{b[1]},{b[2]:.9f},{b[3]:.4f}")
    shown = "\n".join(
        f"  - (t={a[0]}, n={a[1]}) W={a[2]:.6f} T={a[3]:.2f} preferred by W "
        f"over (t={b[0]}, n={b[1]}) W={b[2]:.6f} T={b[3]:.2f}"
        for a, b in pairs[:40])
    more = f"\n  - ... {len(pairs) - 40} more" if len(pairs) > 40 else ""
    md_lists.append(f"- goal {g}: {len(pairs)} discordant pairs among "
                    f"{len(states)} states (first-player win "
                    f"{summary['first_player_win']:.6f})\n{shown}{more}")
  outputs.write_csv(os.path.join(wd, "goals.csv"),
                    "goal,discordant_pairs,states",
                    [f"{g},{c},{s}" for g, c, s in counts])
  outputs.write_csv(os.path.join(wd, "discrepancies.csv"),
                    "goal,t_W_prefers,n_W_prefers,W1,T1,t_other,n_other,W2,T2",
                    rows)
  _plot(os.path.join(wd, "goals.png"), counts)
  md = ["# Goal-score experiment", "",
        outputs.command_line(time.time() - t0,
                             "solves included when not resumed"), "",
        f"Opening turn (b = d = 0), reachable states with 0 < t <= "
        f"{_T_LAST.value}: pairs ranked in opposite order by the win "
        "probability and by the maximum expected score of the turn. "
        "Figure: goals.png; data: goals.csv, discrepancies.csv.", "",
        "| goal | discordant pairs | states |", "|---|---|---|"]
  md += [f"| {g} | {c} | {s} |" for g, c, s in counts] + [""] + md_lists
  outputs.write_report(os.path.join(wd, "goals.md"), md,
                       show=8 + len(counts))


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
  _WORKDIR = flags.DEFINE_string("workdir", None, "Experiment directory.")
  _GOALS = flags.DEFINE_list("goals", ["10000", "30000"], "Goal scores.")
  _T_LAST = flags.DEFINE_integer("t_last", 1500, "Largest turn total.")
  command_line.run(main, required=("config", "workdir"))
