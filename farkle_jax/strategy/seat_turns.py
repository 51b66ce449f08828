"""One turn of an N-player position rebuilt from the solved start vectors
(docs/model.md §8), for the queries of `seat_game`: the turn pass of the
solver (`solver.vector_pass`) for one key, the score sets it reads, the
ways to set a roll's dice aside, and what a bank at the goal is worth
under the final round (the table of `solver.last_turns`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

import jax
import numpy as np

from farkle_jax.game import hand_rolls, roll_tables, scoring
from farkle_jax.game.rules import Rules
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, vector_pass


class RollSets(NamedTuple):
  """The score sets of one dice count n, as `SeatGame.roll_value` reads
  them from the roll tables."""
  rows: np.ndarray   # [R] 0..R-1
  pts: np.ndarray    # [R, J] units each option adds
  next: np.ndarray   # [R, J] dice to roll after it, less one
  prob: np.ndarray   # [R, 1] the set's probability

  @classmethod
  def of(cls, roll: roll_tables.RollTables, n: int) -> "RollSets":
    r = np.nonzero(roll.set_dice == n)[0]
    return cls(np.arange(len(r)), roll.opt_pts[r],
               roll.opt_next[r] - 1, roll.set_prob[r][:, None])


def keeps(rules: Rules, n: int, dice: Sequence, hand) -> list[tuple]:
  """(faces kept, points, dice state after) of every way to set dice
  aside from a roll of dice state n (`hand`: the roll where the dice
  differ, as `positions.PositionCheck.roll_of` reads it)."""
  if not rules.dice_alike:
    return hand_rolls.options(rules, hand)
  counts = tuple(list(dice).count(f) for f in range(1, 7))
  return [(tuple(f for f in range(6, 0, -1) for _ in range(kept[f - 1])),
           points, roll_tables.next_dice(n, sum(kept)))
          for kept, points in scoring.keeps(rules, counts)]


def bank_at_goal(final: np.ndarray, seats: SeatsLayout, key: tuple,
                 reach: int) -> np.ndarray:
  """[N] every seat's chance (mover first) after the mover of `key` banks
  to a total of `reach` units past the lowest score, at or past the goal:
  the last turns' values, or a win past the final-round cap."""
  if reach >= seats.num_scores + seats.past_goal:
    return np.eye(seats.players)[0]
  return final[seats.final_row(seats.others_index(key), reach)]


@functools.partial(jax.jit, static_argnames=("seats",))
def _compiled_turn(w0: jax.Array, ints: jax.Array, roll: bellman.RollArrays,
                   final: jax.Array, seats: SeatsLayout) -> jax.Array:
  """[T + 1, S, N + 1] the turn of one key, in one call to the device."""
  one = lambda i: ints[i:i + 1]
  batch = vector_pass.Batch(
      farkle=vector_pass.farkle_values(w0, one(0), seats),
      bank_base=one(1), s0=one(2), top=ints[3],
      final=final if seats.past_goal else None)
  rows = vector_pass.turn_pass(w0, batch, roll, seats, full=True)[..., 0]
  return vector_pass.seat_vector(rows, seats.players, axis=-1)


def turn_rows(w0: jax.Array, key: tuple, seats: SeatsLayout,
              roll: bellman.RollArrays, final: jax.Array) -> jax.Array:
  """[T + 1, S, N + 1] the turn of one key (`vector_pass.turn_pass`);
  `final` as `final_table` gives it."""
  # One int32 array (farkle target, bank base, s0, top): one transfer.
  ints = np.array([seats.key_index(seats.farkle_fields(key)),
                   seats.bank_base(key), key[0], seats.t_max(key[0])],
                  np.int32)
  return _compiled_turn(w0, ints, roll, final, seats)
