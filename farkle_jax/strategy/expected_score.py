"""Maximum expected score of one turn (docs/model.md §6.1), and fixed-policy turns.

Ignoring both banked scores, a turn from (n, t) (n dice to roll, turn total
t) banks T(n, t) points on average when played to maximize that mean:

    T(n, t) = max(t, roll(n, t))  if t can be banked (t >= bank minimum)
            = roll(n, t)          otherwise
    roll(n, t) = sum_r p(r) * max_j T(next[r, j], t + pts[r, j])

(a farkle banks 0). V(n, t) = T(n, t) - t is what rolling on is worth. Turn
totals only grow, so one backward pass over t from a cap solves it; at and
above the cap every state banks. `solve` raises the cap until the highest
turn total where rolling is optimal lies below half of it, so the cap does
not change the policy below that (checked in tests by doubling it).

The same pass evaluates a fixed policy (`evaluate`): the mean points banked
and the probability that the turn ends in a farkle.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules

START_CAP = 20_000  # points; doubled until the policy fits below half of it


class TurnSolution(NamedTuple):
  """A one-turn policy and its values over turn totals 0 .. cap (units)."""
  unit: int                # points per score unit
  bank_min: int            # smallest bankable turn total, units
  expected: np.ndarray     # [cap + 1, S] float64, T(n, t) in points
  bank: np.ndarray         # [cap + 1, S] bool, banks at (t, n)
  farkle: np.ndarray       # [cap + 1, S] float64, P(turn ends in a farkle)

  @property
  def cap(self) -> int:
    return self.expected.shape[0] - 1

  @property
  def gain(self) -> np.ndarray:
    """V(n, t) = T(n, t) - t, [cap + 1, S] points."""
    t = np.arange(self.cap + 1)[:, None] * self.unit
    return self.expected - t

  def points_per_turn(self) -> float:
    return float(self.expected[0, -1])      # the whole hand

  def farkle_rate(self) -> float:
    return float(self.farkle[0, -1])


def _pass(roll: roll_tables.RollTables, unit: int, bank_min: int, cap: int,
          bank_rule, prefer: np.ndarray | None, farkle_points: float = 0.0):
  """Backward pass over t; banks and choices from the rule or the maximum.

  Args:
    roll: roll tables.
    unit, bank_min, cap: sizes (units).
    farkle_points: what a farkle is worth (0 for one turn on its own).
    bank_rule: None (bank when it is at least the roll value) or a bool
      array [cap + 1, S] (bank there, where banking is allowed).
    prefer: None (choose the option of highest value) or [cap + 1 + P, S]
      preferences over the state reached (highest wins, first on ties).
  """
  top = cap + int(roll.opt_pts.max()) + 1
  t_all = np.arange(top + 1)
  S = roll.dice_states
  value = np.repeat((t_all * unit).astype(np.float64)[:, None], S, 1)
  value[cap + 1:] += tail_gain(roll, unit) if prefer is None else 0.0
  farkle = np.zeros((top + 1, S))
  bank = np.ones((top + 1, S), bool)
  bank[cap + 1:] = ~_risk_free(roll)
  dice = roll.set_dice - 1
  rows = np.arange(len(dice))
  for t in range(cap, -1, -1):
    at = t + roll.opt_pts                      # [R, J]
    nxt = roll.opt_next - 1
    score = value[at, nxt] if prefer is None else prefer[at, nxt]
    j = np.argmax(score, axis=1)
    best = value[at[rows, j], nxt[rows, j]]
    fbest = farkle[at[rows, j], nxt[rows, j]]
    roll_value = (np.bincount(dice, roll.set_prob * best, S)
                  + roll.farkle_prob * farkle_points)
    roll_farkle = roll.farkle_prob + np.bincount(dice, roll.set_prob * fbest,
                                                 S)
    may_bank = t >= bank_min
    if bank_rule is None:
      banks = may_bank & (t * unit >= roll_value)
    else:
      banks = may_bank & bank_rule[t]
    value[t] = np.where(banks, t * unit, roll_value)
    farkle[t] = np.where(banks, 0.0, roll_farkle)
    bank[t] = banks
  return value[:cap + 1], bank[:cap + 1], farkle[:cap + 1]


def _risk_free(roll: roll_tables.RollTables) -> np.ndarray:
  """[S] bool: dice states whose roll never farkles (zilch's six dice,
  where a roll with nothing in it scores and uses them all)."""
  return roll.farkle_prob == 0


def tail_gain(roll: roll_tables.RollTables, unit: int,
              iterations: int = 10_000) -> np.ndarray:
  """[S] V(n, t) for turn totals past any cap, points (docs/model.md §6.1).

  Where a turn total is large, every roll that can farkle risks more than
  it can gain, so the player banks: V = 0. A roll that cannot farkle is
  free, so the player always rolls it; its gain does not depend on t:

      V(n) = sum_r p_n(r) * max_j (pts_j + V(next_j))    (risk-free n)

  with V(next) = 0 at the other counts. Hot dice return to a risk-free
  count with probability below 1, so the fixed point is unique; iterating
  from 0 reaches it (to float64 rounding well before `iterations`). Rules
  whose rolls all can farkle get zeros, and every value as before.
  """
  safe = _risk_free(roll)
  gain = np.zeros(roll.dice_states)
  if not safe.any():
    return gain
  dice = roll.set_dice - 1
  pts = roll.opt_pts * unit
  for _ in range(iterations):
    best = (pts + gain[roll.opt_next - 1]).max(axis=1)          # [R]
    new = np.where(safe, np.bincount(dice, roll.set_prob * best,
                                     roll.dice_states), 0.0)
    if np.array_equal(new, gain):
      break
    gain = new
  return gain


def solve(rules: Rules, roll: roll_tables.RollTables | None = None,
          bank_at: int | None = None, cap: int | None = None,
          farkle_points: float = 0.0) -> TurnSolution:
  """Maximum expected score of one turn.

  Args:
    rules: the rule set (its scoring and bank minimum).
    roll: its roll tables (built if not given).
    bank_at: None for the optimal bank decisions; else bank exactly when
      t >= bank_at points (the choices still maximize the mean).
    cap: turn-total cap in points; default: raised from START_CAP until the
      highest total where rolling is optimal is below half of it.
    farkle_points: what ending the turn in a farkle is worth, in points
      (the long-run objective of `long_run` prices the farkle count so).

  Returns:
    The solution on turn totals 0 .. cap.
  """
  roll = roll_tables.build(rules) if roll is None else roll
  layout = StateLayout(rules)
  unit, bank_min = layout.unit, layout.bank_min
  size = (cap or START_CAP) // unit
  if bank_at is not None:
    size = max(size, 2 * (bank_at // unit) + 2)
  while True:
    rule = None
    if bank_at is not None:
      rule = np.repeat((np.arange(size + 1) * unit >= bank_at)[:, None],
                       roll.dice_states, 1)
    value, bank, farkle = _pass(roll, unit, bank_min, size, rule, None,
                                farkle_points)
    # Past the cap the turn follows `tail_gain`: it must already do so
    # over the upper half (bank at every count that can farkle).
    risky = bank[:, ~_risk_free(roll)]
    rolls = np.nonzero(~risky.all(axis=1))[0]
    if cap is not None or rolls.max(initial=0) < size // 2:
      return TurnSolution(unit, bank_min, value, bank, farkle)
    size *= 2


def evaluate(sol: TurnSolution, roll: roll_tables.RollTables,
             bank: np.ndarray, prefer: np.ndarray) -> TurnSolution:
  """Mean points and farkle probability of a fixed one-turn policy.

  Args:
    sol: a solution giving the sizes (its cap; states above bank).
    roll: roll tables.
    bank: [cap + 1, S] bool, bank at (t, n) (where banking is allowed).
    prefer: [cap + 1, S] preference over reached states (argmax, first on
      ties); reached states above the cap bank and are preferred by total.

  Returns:
    The policy's values (its own bank flags where banking is allowed).
  """
  top = sol.cap + int(roll.opt_pts.max()) + 1
  full = np.full((top + 1, roll.dice_states), np.inf)
  full[:sol.cap + 1] = prefer
  full[sol.cap + 1:] = 1e300 + np.arange(top - sol.cap)[:, None]
  value, banks, farkle = _pass(roll, sol.unit, sol.bank_min, sol.cap, bank,
                               full)
  return TurnSolution(sol.unit, sol.bank_min, value, banks, farkle)


def reachable(roll: roll_tables.RollTables, size: int) -> np.ndarray:
  """[size, S] bool: (t, n) some rolls reach from (0, S), t in units."""
  return roll_tables.reachable(roll, size)


def thresholds(sol: TurnSolution, reach: np.ndarray
               ) -> dict[int, tuple[int | None, list[int]]]:
  """Per n: the smallest reachable bankable t (points) where banking is
  optimal, and the reachable totals above it where rolling is optimal."""
  out = {}
  size = reach.shape[0]
  t_ok = np.arange(size) >= sol.bank_min
  for n in range(1, reach.shape[1] + 1):
    col = reach[:, n - 1] & t_ok
    banks = col & sol.bank[:size, n - 1]
    first = int(np.argmax(banks)) if banks.any() else None
    again = []
    if first is not None:
      again = [int(t) * sol.unit for t in np.nonzero(
          col & ~sol.bank[:size, n - 1])[0] if t > first]
    out[n] = (None if first is None else first * sol.unit, again)
  return out


def format_gain_table(sol: TurnSolution, reach: np.ndarray, t_last: int,
                      labels: tuple[str, ...] | None = None) -> str:
  """V(n, t) for t = 0 .. t_last points; '-' marks unreachable states;
  columns named by `labels` (`layout.dice_labels`; default n = 6..1)."""
  S = reach.shape[1]
  labels = labels or tuple(str(n) for n in range(1, S + 1))
  lines = ["     t" + "".join(f"{'n=' + labels[n - 1]:>10}"
                             for n in range(S, 0, -1))]
  gain = sol.gain
  for t in range(min(t_last // sol.unit, len(gain) - 1) + 1):
    cells = []
    for n in range(S, 0, -1):
      cells.append(f"{gain[t, n - 1]:10.2f}" if reach[t, n - 1]
                   else f"{'-':>10}")
    lines.append(f"{t * sol.unit:6d}" + "".join(cells))
  return "\n".join(lines)
