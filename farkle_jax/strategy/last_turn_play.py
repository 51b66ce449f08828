"""A chaser's last turn in a game of N players with a final round
(docs/model.md §8), for games against the computer: every way to set dice
aside with the chaser's own chance to win after it, and bank or roll on.

A chaser must finish strictly higher than the bar; one who passes it may
bank (holding the bar against the chasers after them) or roll on to raise
it. With shared ties (`rules.final_round_ties = "shared"`) a chaser may
also bank a total equal to the bar and join the h players holding it, who
share the win at the end; the chaser's chances then depend on h. The
values are those of the solve (`solver.last_turns`): one turn pass
per chaser position, over the running total, kept for the turn's rolls.
"""

from __future__ import annotations

import collections
from typing import Sequence

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, last_turns
from farkle_jax.strategy import positions, seat_turns
from farkle_jax.strategy.seat_turns import RollSets
from farkle_jax.strategy.solved_game import Choice, Decision

KEPT = 16   # chaser turns kept (one per chaser position asked)


class LastTurns:
  """The chasers' last turns of one solved game."""

  def __init__(self, seats: SeatsLayout, roll: roll_tables.RollTables,
               arrays: bellman.RollArrays, check: positions.PositionCheck):
    self.seats, self.roll, self._arrays = seats, roll, arrays
    self._check = check
    self._phis: list[np.ndarray] | None = None   # on first use
    self._rows: collections.OrderedDict = collections.OrderedDict()
    self._sets = [RollSets.of(roll, n)
                  for n in range(1, roll.dice_states + 1)]

  def _tables(self) -> list[np.ndarray]:
    """`last_turns.chaser_tables`, computed once."""
    if self._phis is None:
      self._phis = last_turns.chaser_tables(self.seats, self._arrays)
    return self._phis

  def final_table(self) -> np.ndarray:
    """`last_turns.final_values`, from the tables the chasers' turns
    read."""
    phis = self._tables() if self.seats.past_goal else None
    return last_turns.final_values(self.seats, self._arrays, phis)

  def _units(self, bar: int) -> int:
    """A bar in points as units past the goal."""
    return bar // self.seats.unit - self.seats.goal

  def _tau(self, key: tuple, bar: int) -> int:
    """The mover's threshold at `bar`: a bank needs a total past the goal
    by more than it (`last_turns.threshold`)."""
    return int(last_turns.threshold(self.seats, self._units(bar), key[0]))

  def _tie(self, bar: int, holders: int, tau: int) -> int:
    """The holders a bank at the bar would join (shared ties, where the
    mover's threshold `tau` allows banking the bar), else 0."""
    shared = last_turns.shared(self.seats) and tau == self._units(bar) - 1
    return holders if shared else 0

  def _turn(self, key: tuple, bar: int, later: int, holders: int
            ) -> np.ndarray:
    """[T + 1, S, C] the mover's last turn, rows by running total, for
    the mover of `key` (scores from the mover) with `later` chasers after
    them and `holders` players holding the bar."""
    seats, tau = self.seats, self._tau(key, bar)
    rest = int(seats.scores_index(tuple(key[1:1 + later])))
    tie = self._tie(bar, holders, tau)
    ask = (int(key[0]), tau, rest, later, tie)
    if ask not in self._rows:
      self._rows[ask] = last_turns.chaser_turn(
          seats, self._arrays, self._tables()[later], tau, rest, tie)
      if len(self._rows) > KEPT:
        self._rows.popitem(last=False)
    return self._rows[ask]

  def _row(self, key: tuple, t: int) -> int:
    """Row of the running total after a turn total of t points."""
    start = last_turns.running_row(self.seats, key[0])
    return int(start) + t // self.seats.unit

  def wins_now(self, key: tuple, t: int) -> bool:
    """Whether the total reaches the cap past the goal: a win outright."""
    return self._row(key, t) >= self.seats.num_rows

  def may_bank(self, key: tuple, bar: int, t: int) -> bool:
    """Whether a turn total of t points may be banked: past the bar (or
    at it, with shared ties) and at least the chaser's bank floor."""
    x = last_turns.running_total(self.seats, self._row(key, t))
    return x >= self.seats.goal + 1 + self._tau(key, bar)

  def choices(self, key: tuple, bar: int, later: int, t: int, n: int,
              dice: Sequence[int], holders: int = 1) -> tuple[Choice, ...]:
    """Every way to set `dice` aside at turn total t (points) with dice
    state n, with the chaser's own chance after it (a share of the win
    counted as its fraction), best first; `holders` players hold the
    bar."""
    rows = self._turn(key, bar, later, holders)
    top = self.seats.num_rows
    rules = self.seats.rules
    n, dice, hand = self._check.roll_of(0, dice,
                                        n if rules.dice_alike else None)
    out = []
    for faces, points, n2 in seat_turns.keeps(rules, n, dice, hand):
      row = self._row(key, t + points)
      own = 1.0 if row >= top else float(rows[row, n2 - 1, 0])
      out.append(Choice(faces, points, t + points, n2, own, row >= top))
    return tuple(sorted(out, key=lambda c: (-c.win, -c.points,
                                            -len(c.kept))))

  def decision(self, key: tuple, bar: int, later: int, t: int, n: int,
               holders: int = 1) -> Decision:
    """Bank (where allowed) or roll on at turn total t with n dice, by the
    chaser's own chance; banking on equal values, as the solve."""
    rows = self._turn(key, bar, later, holders)
    top = self.seats.num_rows
    row, sets = self._row(key, t), self._sets[n - 1]
    reached = rows[np.minimum(row + sets.pts, top), sets.next, 0]  # [R, J]
    roll = float(sets.prob[:, 0] @ reached.max(axis=1))   # a farkle: 0
    bank = None
    if self.may_bank(key, bar, t):
      x = min(last_turns.running_total(self.seats, row) - self.seats.goal,
              self.seats.past_goal - 1)
      rest = int(self.seats.scores_index(tuple(key[1:1 + later])))
      tie = self._tie(bar, holders, self._tau(key, bar))
      joins = tie if tie and x == self._units(bar) else 0   # j + holders
      bank = float(self._tables()[later][x, joins, rest, 0])
    best = "bank" if bank is not None and bank >= roll else "roll"
    return Decision(bank, roll, best)
