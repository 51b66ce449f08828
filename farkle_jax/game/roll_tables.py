"""Transition tables of one roll, as small arrays for the solver
(docs/model.md §1, §3).

For every number of dice n = 1..6 the distinct score sets of `scoring` become
rows of padded option arrays. A row r (a score set of `set_dice[r]` dice,
probability `set_prob[r]`) offers up to J options; option j adds
`opt_pts[r, j]` score units to the turn total and leaves `opt_next[r, j]` dice
to roll (six after hot dice). Short rows repeat their first option, which
leaves the maximum over options unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import scoring
from farkle_jax.game.rules import Rules


class RollTables(NamedTuple):
  """Score sets of all dice counts, flattened over n (R rows in all)."""
  set_dice: np.ndarray     # [R] int32, dice rolled (1..6)
  set_prob: np.ndarray     # [R] float64, probability within its dice count
  opt_pts: np.ndarray      # [R, J] int32, points added, in score units
  opt_next: np.ndarray     # [R, J] int32, dice to roll next (1..6)
  farkle_prob: np.ndarray  # [6] float64, P(farkle) for n = 1..6
  reach_pts: tuple[tuple[tuple[int, int], ...], ...]  # [6] (units, next n)


def next_dice(n: int, k: int) -> int:
  """Dice to roll after using k of n: hot dice give six again."""
  return 6 if k == n else n - k


def build(rules: Rules) -> RollTables:
  """Builds the roll tables of a rule set (exact probabilities as float64)."""
  rows = []
  farkle = np.zeros(6)
  reach = []
  for n in range(1, 7):
    out = scoring.outcomes(rules, n)
    farkle[n - 1] = float(out.farkle)
    for sset, p in zip(out.score_sets, out.probs):
      opts = [(pts // rules.step, next_dice(n, k)) for k, pts in sset]
      rows.append((n, float(p), opts))
    reach.append(tuple(sorted({(pts // rules.step, next_dice(n, k))
                               for k, pts in out.all_choices})))
  width = max(len(opts) for _, _, opts in rows)
  pts = np.zeros((len(rows), width), np.int32)
  nxt = np.zeros((len(rows), width), np.int32)
  for r, (_, _, opts) in enumerate(rows):
    opts = opts + [opts[0]] * (width - len(opts))
    pts[r] = [o[0] for o in opts]
    nxt[r] = [o[1] for o in opts]
  return RollTables(
      set_dice=np.array([n for n, _, _ in rows], np.int32),
      set_prob=np.array([p for _, p, _ in rows], np.float64),
      opt_pts=pts, opt_next=nxt, farkle_prob=farkle, reach_pts=tuple(reach))
