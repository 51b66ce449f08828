"""Transition tables of one roll, as small arrays for the solver
(docs/model.md §1, §3).

For every dice state n = 1..S (`game.dice`: for six dice alike, S = 6 and n
is the number of dice to roll) the distinct score sets of `scoring` become
rows of padded option arrays. A row r (a score set of dice state
`set_dice[r]`, probability `set_prob[r]`) offers up to J options; option j
adds `opt_pts[r, j]` score units to the turn total and leaves dice state
`opt_next[r, j]` to roll (the whole hand after hot dice). Short rows repeat
their first option, which leaves the maximum over options unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import dice, scoring
from farkle_jax.game.rules import Rules


class RollTables(NamedTuple):
  """Score sets of all dice states, flattened over n (R rows in all)."""
  set_dice: np.ndarray     # [R] int32, dice state rolled (1..S)
  set_prob: np.ndarray     # [R] float64, probability within its dice state
  opt_pts: np.ndarray      # [R, J] int32, points added, in score units
  opt_next: np.ndarray     # [R, J] int32, dice state to roll next (1..S)
  farkle_prob: np.ndarray  # [S] float64, P(farkle) for n = 1..S
  reach_pts: tuple[tuple[tuple[int, int], ...], ...]  # [S] (units, next n)

  @property
  def dice_states(self) -> int:
    """S: the dice states (6 for six dice alike)."""
    return len(self.farkle_prob)


def reachable(roll: RollTables, size: int, start: int | None = None
              ) -> np.ndarray:
  """[size, S] bool: the in-turn states (t, n), t in units below `size`,
  that some rolls reach from t = 0 with dice state `start` (default S, the
  whole hand of dice alike). Nothing continues past the last row, so a
  caller passes the last turn total that play goes on from plus one."""
  S = roll.dice_states
  reach = np.zeros((size, S), bool)
  reach[0, (S if start is None else start) - 1] = True
  # Every option as (state left, units added, state reached), each row's
  # at once. An option adds at least one unit (points are positive
  # multiples of the step), so a row is complete once the rows below it
  # have been followed.
  options = [(n, pts, nxt - 1) for n, opts in enumerate(roll.reach_pts)
             for pts, nxt in opts]
  source, gain, target = np.array(options, np.int64).reshape(-1, 3).T
  for t in range(size):
    on = reach[t, source]
    rows = t + gain[on]
    inside = rows < size
    reach[rows[inside], target[on][inside]] = True
  return reach


def next_dice(n: int, k: int) -> int:
  """Dice to roll after using k of n: hot dice give six again."""
  return 6 if k == n else n - k


def build(rules: Rules) -> RollTables:
  """Builds the roll tables of a rule set (exact probabilities as float64)."""
  rows, farkle, reach = (_alike(rules) if rules.dice_alike
                         else _distinct(rules))
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
      opt_pts=pts, opt_next=nxt, farkle_prob=np.array(farkle),
      reach_pts=tuple(reach))


def _alike(rules: Rules):
  """Rows, farkle chances and reachable options of six dice alike."""
  rows, farkle, reach = [], [], []
  for n in range(1, 7):
    out = scoring.outcomes(rules, n)
    farkle.append(float(out.farkle))
    for sset, p in zip(out.score_sets, out.probs):
      opts = [(pts // rules.step, next_dice(n, k)) for k, pts in sset]
      rows.append((n, float(p), opts))
    reach.append(tuple(sorted({(pts // rules.step, next_dice(n, k))
                               for k, pts in out.all_choices})))
  return rows, farkle, reach


def _distinct(rules: Rules):
  """The same for dice that differ, or hands that do: by dice state, the
  states of every hand one after the other (`dice.table_states`)."""
  rows, farkle, reach = [], [], []
  states = dice.table_states(rules.hand_specs)
  for n, (hand, left) in enumerate(states, start=1):
    out = scoring.hand_outcomes(rules, left, hand)
    farkle.append(float(out.farkle))
    for options, p in zip(out.option_sets, out.probs):
      rows.append((n, float(p), [(pts // rules.step, s)
                                 for pts, s in options]))
    reach.append(tuple(sorted({(pts // rules.step, s)
                               for pts, s in out.all_choices})))
  return rows, farkle, reach
