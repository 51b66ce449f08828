"""The wavefront's schedule for N players, and what a sweep of it would
move (docs/model.md §8, "The wavefront's schedule for N players").

The two-player schedule (`wave_schedule`) holds for any number of players
with the sum of all N banked-score indices in place of b + d: keys of sum
s finish their turn pass at step x + x // bank_min (x the largest sum -
s) and process row t at step finish - t, from t_max(s_0) down. A bank of
t >= bank_min from sum s reads a key of a sum at least s + t, which
finished at an earlier step; a farkle reads the next player's key, the
scores rotated (the same sum: it finishes at the same step, solved with
the key as the two-player finishing groups are) or, under a penalty, a
lower sum (read at its previous value). So a sweep is `span` wave steps,
each a few loop steps, against the stage engine's loop step per row of
every sub-batch of every stage (`seat_counts`).

Only the schedule and its counts are built: how many keys are live at
each step, the segments and chunks of columns the two-player method would
cut them into (`wave_schedule.cut_segments`, `chunk_columns`), the
dependent loop steps and the bytes of one sweep. The sweep that would run
it (value vectors of N channels in the rings) is not. The counts come from
the keys by (mover's score, the others' sum), never from per-key arrays,
so the plan of a model of 1e8 keys and more takes a second.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, vector_pass, wave_schedule, wavefront
from farkle_jax.solver.sweep_counts import SweepCounts
from farkle_jax.solver.wave_row import INDEX_BYTES, TILE

SEGMENTS = 16   # most segments a sweep's steps are cut into (as two players)


class SeatWave(NamedTuple):
  """The N-player wavefront's schedule of one sweep, and its counts."""
  counts: SweepCounts     # dependent steps, bytes (sweep_counts)
  span: int               # wave steps of a sweep
  chunk: int              # C, columns a loop iteration evaluates
  widths: tuple[int, ...]  # [M] columns of each segment
  bounds: tuple[int, ...]  # [M + 1] first step of each segment, then span
  most_live: int          # the most keys live at one step
  ring_bytes: int         # the two rings of the widest segment's
                          #   columns (C channels: N - 1 seats and the
                          #   farkle slope), over all devices
  vector_bytes: int       # the start vectors, whole on every device
  devices: int = 1        # the columns split over this many

  @property
  def device_bytes(self) -> int:
    """On each device: its share of the rings, and the start vectors."""
    return self.ring_bytes // self.devices + self.vector_bytes


class ColumnBytes(NamedTuple):
  """What one column moves, vectors of C = N channels."""
  read: int      # gathered at one step: a ring row per distinct target,
                 #   the farkle's and the bank's start vectors, and a table
                 #   entry per dice state
  written: int   # written at one step: a row per dice state
  ring: int      # its ring, which a segment's move reads and writes


def column_bytes(seats: SeatsLayout, roll: bellman.RollArrays
                 ) -> ColumnBytes:
  """`ColumnBytes` of the N-player wavefront (float64 values)."""
  size, C = 8, vector_pass.channels(seats.players)
  S = roll.dice_states
  return ColumnBytes(
      (bellman.row_plan(roll).num_targets * C + 2 * seats.players) * size
      + S * INDEX_BYTES, S * C * size,
      wavefront.ring_rows(roll) * S * C * size)


def move_cost(cost: ColumnBytes) -> float:
  """A column's ring moved (read and written), in column-steps: what
  `wave_schedule.cut_segments` weighs a segment's moves by."""
  return 2 * cost.ring / cost.read


def finish_of_sums(seats: SeatsLayout, sums: np.ndarray) -> np.ndarray:
  """The step (before the shift) at which keys of index sum `sums`
  finish."""
  x = seats.players * (seats.num_scores - 1) - sums
  return x + x // seats.bank_min


def keys_by_mover_and_sum(seats: SeatsLayout) -> np.ndarray:
  """[B, (N - 1)(B - 1) + 1] keys with the mover's score index s_0 and
  the other players' index sum r (the farkle counts multiply each)."""
  B, others = seats.num_scores, np.ones(1, np.int64)
  for _ in range(seats.players - 1):
    others = np.convolve(others, np.ones(B, np.int64))
  per = seats.num_farkle ** seats.players
  return np.broadcast_to(others * per, (B, len(others)))


def live_keys(seats: SeatsLayout) -> np.ndarray:
  """[span] keys live (between their start and finish) at each step,
  the steps shifted so that the first key starts at step 0."""
  count = keys_by_mover_and_sum(seats)
  s0 = np.arange(seats.num_scores)[:, None]
  finish = finish_of_sums(seats, s0 + np.arange(count.shape[1])[None])
  start = finish - np.asarray(seats.t_max(s0), np.int64)
  low = int(start.min())
  live = np.zeros(int(finish.max()) - low + 2, np.int64)
  np.add.at(live, (start - low).ravel(), count.ravel())
  np.add.at(live, (finish - low + 1).ravel(), -count.ravel())
  return np.cumsum(live)[:-1]


def plan(seats: SeatsLayout, devices: int = 1,
         segments: int = SEGMENTS) -> SeatWave:
  """The schedule of one sweep on `devices` devices (columns split evenly
  among them, in whole tiles) and its counts.

  Counted as the two-player wavefront is (`wave_counts.sweep_bytes`),
  with vectors of C = N channels (`vector_pass.channels`) where two
  players carry one value: per column and step the ring row of each of
  the row's D distinct targets, the farkle's and the bank's start vectors
  and a table entry per dice state read, a row per dice state written
  (S of them: six for six dice alike); per segment the rings of its
  columns moved (read and written); per key, its finishing group's solve
  (its vector and slope read, its vector written). Dependent loop steps:
  a loop iteration per chunk of C columns at each step, and per segment
  its moves.
  """
  live, size = live_keys(seats), 8
  cost = column_bytes(seats, bellman.roll_arrays(roll_tables.build(
      seats.rules)))
  column_read, column_write, ring = cost
  chunk = wave_schedule.chunk_columns(live, TILE * devices)
  bounds = wave_schedule.cut_segments(live, segments, chunk,
                                      move_cost(cost))
  widths = tuple(int(-(-live[a:b].max() // chunk) * chunk)
                 for a, b in zip(bounds[:-1], bounds[1:]))
  lengths = np.diff(bounds)
  column_steps = int(np.dot(lengths, widths))
  moved = ring * sum(widths)
  keys = seats.num_keys
  finishing = keys * ((seats.players + 1) * size + 2 * INDEX_BYTES)
  counts = SweepCounts(
      dependent_steps=int(np.dot(lengths + 1, np.asarray(widths) // chunk)),
      gathered_bytes=column_steps * column_read + moved + finishing,
      xla_bytes_accessed=0.0,
      written_bytes=column_steps * column_write + moved
      + keys * seats.players * size,
      column_steps=column_steps, live_rows=int(live.sum()))
  return SeatWave(counts, len(live), chunk, widths, tuple(bounds),
                  int(live.max()), 2 * max(widths) * ring,
                  keys * seats.players * size, devices)

