"""The chaser's last turn of the final round (docs/model.md §1).

When a player banks at or above the goal with the final-round rule, the
other player (the chaser) gets one last turn and wins only by finishing
strictly higher. Nothing after that turn matters, so the chaser never banks
short of winning and keeps rolling until the turn total passes the bar or
the dice farkle: a one-turn "reach at least m more units" problem. Its
probabilities depend only on the units still needed and the dice in hand,
so one table serves every bar and every chaser score:

    V(m, n) = 1                                           for m <= 0
    V(m, n) = sum_r p(r) max_j V(m - pts[r, j], next[r, j])  (a farkle: 0)

Every scoring choice adds at least one unit, so V fills in order of m.
"""

from __future__ import annotations

import functools

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.rules import Rules


def reach_table(roll: roll_tables.RollTables, size: int, tie: bool = False
                ) -> np.ndarray:
  """[size + 1, S] V(m, n): the best chance to add at least m units (m = 0
  .. size) to the turn total from a roll of dice state n before farkling.

  With `tie` (rules.final_round_ties = "shared"), one unit short is a tie
  the chaser may stop at for half a win: V(1, n) = max(1/2, rolling on).
  """
  S = roll.dice_states
  v = np.zeros((size + 1, S))
  v[0] = 1.0
  dice = roll.set_dice - 1
  for m in range(1, size + 1):
    need = np.maximum(m - roll.opt_pts, 0)                 # [R, J]
    best = v[need, roll.opt_next - 1].max(axis=1)          # [R]
    v[m] = np.bincount(dice, roll.set_prob * best, S)
    if tie and m == 1:
      v[m] = np.maximum(v[m], 0.5)
  return v


@functools.lru_cache(maxsize=8)
def _table(rules: Rules, size: int, tie: bool) -> np.ndarray:
  return reach_table(roll_tables.build(rules), size, tie)


def chance(rules: Rules, need: int, n: int, tie: bool = False) -> float:
  """V(need, n): the chance to add at least `need` units rolling n dice
  (with `tie`, half a chance for stopping one unit short)."""
  if need <= 0:
    return 1.0
  size = 1 << max(9, int(need).bit_length())   # few sizes: cached tables
  return float(_table(rules, size, tie)[need, n - 1])


def chaser_wins(rules: Rules, need: np.ndarray, tie: np.ndarray | bool = False
                ) -> np.ndarray:
  """The chaser's chance to win from the start of the last turn, needing a
  turn total of at least `need` units (the bar minus the chaser's score,
  plus one unit, and at least what the chaser may bank); `tie` where a
  shared tie may be banked (half a win)."""
  need = np.asarray(need)
  size = int(max(1, need.max()))
  idx = np.maximum(need, 0)
  return np.where(tie, _table(rules, size, True)[idx, -1],
                  _table(rules, size, False)[idx, -1])
