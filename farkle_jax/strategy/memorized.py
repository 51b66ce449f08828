"""The memorized table: maximum-expected-score play a person can carry in
their head (docs/model.md §6.2).

From V(n, t) of `expected_score`, round V up to the next score step (V = 0,
bank, stays 0) and, for each number of dice n, keep only the turn totals
where the rounded value changes ("breakpoints"). To play: estimate
V(n, t) as the value of the last breakpoint at or below t; bank where it is
0; after a roll take the option with the highest t' + V(n', t'), on ties
preferring one that lets you bank, then the one with more dice.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import N_DICE
from farkle_jax.strategy import expected_score


class MemorizedTable(NamedTuple):
  """The memorized table: per n = 1..6, ((t, rounded V), ...) in points."""
  unit: int
  bank_min: int                                     # units
  points: tuple[tuple[tuple[int, int], ...], ...]   # [6] breakpoints


def build(sol: expected_score.TurnSolution, reach: np.ndarray) -> MemorizedTable:
  """MemorizedTable over the reachable states of `reach` [size, 6]."""
  step = sol.unit
  rounded = np.ceil(np.round(sol.gain / step, 9)) * step
  rounded = np.where(sol.bank, 0.0, np.maximum(rounded, 0.0))
  table = []
  for n in range(1, N_DICE + 1):
    marks, last = [], None
    for t in np.nonzero(reach[:, n - 1])[0]:
      v = int(rounded[t, n - 1])
      if v != last:
        marks.append((int(t) * sol.unit, v))
        last = v
    table.append(tuple(marks))
  return MemorizedTable(sol.unit, sol.bank_min, tuple(table))


def estimate(table: MemorizedTable, rows: int) -> np.ndarray:
  """[rows, 6] estimated V(n, t) (points) for t = 0 .. rows - 1 units."""
  out = np.zeros((rows, N_DICE))
  t = np.arange(rows) * table.unit
  for n, marks in enumerate(table.points):
    starts = np.array([m[0] for m in marks])
    vals = np.array([m[1] for m in marks], np.float64)
    idx = np.maximum(np.searchsorted(starts, t, side="right") - 1, 0)
    out[:, n] = vals[idx]
  return out


def policy(table: MemorizedTable, rows: int) -> tuple[np.ndarray, np.ndarray]:
  """(prefer, bank), each [rows, 6], of playing by the table.

  The preference orders options by t' + V(n', t'), then whether it lets the
  player bank, then dice count; all terms are exact integers.
  """
  v = estimate(table, rows)
  t = np.arange(rows)[:, None]
  n = np.arange(1, N_DICE + 1)[None, :]
  total = t + v / table.unit                          # units
  can_bank = (v == 0) & (t >= table.bank_min)
  prefer = total * 16 + 8 * can_bank + n
  return prefer, v == 0


def format_table(table: MemorizedTable) -> str:
  """One line per n: the rounded V from each breakpoint on."""
  lines = []
  for n in range(N_DICE, 0, -1):
    cells = [f"t>={t}: {'bank' if v == 0 else v}"
             for t, v in table.points[n - 1]]
    lines.append(f"n={n}  " + ", ".join(cells))
  return "\n".join(lines)


class Departures(NamedTuple):
  points_per_turn: float         # mean points of the table strategy
  optimum_per_turn: float        # mean points of exact max-score play
  farkle_rate: float             # P(turn ends in a farkle), table play
  departures_per_turn: float     # mean number of decisions unlike the optimum
  bank_departures: int           # reachable (t, n) with another bank choice
  choice_departures: int         # reachable (t, n, roll) with a worse scoring


def departures(sol: expected_score.TurnSolution, table: MemorizedTable,
               roll: roll_tables.RollTables) -> Departures:
  """How often, and by how much, table play departs from the optimum.

  A decision departs when the table banks where the optimum rolls (or the
  reverse), or takes a scoring of lower T than the best one (ties with
  equal T are not departures). Departures per turn weight each decision by
  the probability that table play reaches it.
  """
  size = sol.cap + 1
  prefer, bank = policy(table, size)
  tab = expected_score.evaluate(sol, roll, bank, prefer)
  top = size + int(roll.opt_pts.max()) + 1
  pref = np.full((top, N_DICE), 1e300)
  pref[:size] = prefer
  value = np.repeat((np.arange(top) * sol.unit * 1.0)[:, None], N_DICE, 1)
  value[:size] = sol.expected
  mass = np.zeros((top, N_DICE))
  mass[0, N_DICE - 1] = 1.0
  rows = np.arange(len(roll.set_dice))
  per_turn, bank_dep, choice_dep = 0.0, 0, 0
  for t in range(size):
    may = t >= sol.bank_min
    tb, ob = may & tab.bank[t], may & sol.bank[t]
    live = mass[t] > 0
    per_turn += float(mass[t][tb != ob].sum())
    bank_dep += int((live & (tb != ob)).sum())
    at, nxt = t + roll.opt_pts, roll.opt_next - 1
    j = np.argmax(pref[at, nxt], axis=1)
    got = value[at[rows, j], nxt[rows, j]]
    worse = got < value[at, nxt].max(axis=1) - 1e-9
    m = np.where(tb, 0.0, mass[t])[roll.set_dice - 1] * roll.set_prob
    per_turn += float(m[worse].sum())
    choice_dep += int((live[roll.set_dice - 1] & worse & ~tb[
        roll.set_dice - 1]).sum())
    np.add.at(mass, (at[rows, j], nxt[rows, j]), m)
  return Departures(tab.points_per_turn(), sol.points_per_turn(),
                    tab.farkle_rate(), per_turn, bank_dep, choice_dep)
