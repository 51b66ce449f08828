"""What one sweep of the seat engine moves and waits on, from the sizes
alone (docs/model.md §8, "Counting a sweep of N players").

The stage engine's tables hold every key of every stage ([S, U * G] int32
each), so building them for a large model takes more host memory than a
plan needs. These counts come from closed forms instead: the keys of each
stage by the mover's score (`SeatsLayout.stage_scores`), sorted within the
stage as `multiplayer.build` sorts them (mover's score, highest first) and
cut into sub-batches of G keys; a sub-batch runs its turn pass from its
highest row, so its row steps are known, and with them:

* dependent loop steps per sweep: per stage, the sub-batches of one device
  run one after another (the longest device sets the stage's time; the
  sorted sub-batches are dealt round the devices, `multiplayer.column`),
  each one loop step per row, plus one per sub-batch; under a penalty,
  each block adds its pointer doubling (`penalty_blocks.DOUBLINGS`
  steps);
* bytes gathered per sweep (`vector_pass.turn_exits`): per key and row,
  the pass reads every option of every score set on the mover's channel
  alone (8 bytes each) and the bank one start vector, and the forward
  pass each option's mass and pick (9 bytes); per key and row of the
  whole turn (T + 1, in sub-batches that pass a row at all), the picks
  read every option again (8 bytes) and the mix one bank vector; and each
  key reads its farkle target once;
* bytes written: per key and row, a row of S dice states for the pass
  and one for the forward pass; per key and row of the whole turn, each
  score set's pick (1 byte);
* bytes exchanged per device: after each stage every device receives the
  other devices' new start vectors (the values are kept whole on each).

Each stage is counted once: one turn pass, as a sweep under a penalty
runs it. Without a penalty a stage repeats its policy steps until they
settle (one to eight passes, `multiplayer.NEWTON_STEPS`), so there these
counts are per policy step. A projection with these counts
(`sweep_counts.projected_seconds`) is a projection, not a measurement.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, multiplayer, penalty_blocks
from farkle_jax.solver.sweep_counts import SweepCounts


class SeatSweep(NamedTuple):
  """Counts of one sweep of the seat engine on D devices."""
  counts: SweepCounts     # steps and bytes (sweep_counts)
  stages: int             # S
  batches: int            # sub-batches per stage, U (a multiple of D)
  group: int              # keys per sub-batch, G
  exchanged_bytes: int    # received by each device per sweep (D > 1)


def sub_batch_tops(seats: SeatsLayout, group: int, devices: int = 1
                   ) -> np.ndarray:
  """[S, U] the highest row of every sub-batch (-1: padding), as
  `multiplayer.build` sets `SeatTables.top`, from the sizes alone."""
  S, U, G = multiplayer.plan_sizes(seats, group, devices)
  hist = seats.stage_scores()                       # [S, B] keys by s0
  t_max = np.asarray(seats.t_max(np.arange(seats.num_scores)))
  tops = np.full((S, U), -1, np.int64)
  for s in range(S):
    m = hist[s, ::-1]                                # mover's score, down
    live = np.nonzero(m)[0]
    if not len(live):
      continue
    ends = np.cumsum(m[live])                        # last slot + 1 per b
    size = int(ends[-1])
    first = np.arange(0, size, G)
    last = np.minimum(first + G, size) - 1
    lo = np.searchsorted(ends, first, side="right")
    hi = np.searchsorted(ends, last, side="right")
    rows = t_max[::-1][live]
    # Sub-batches cover contiguous runs of scores; one run ends where the
    # next starts or just before, so the maximum over [lo, next lo) and
    # the run's last score is the maximum over the run.
    u = multiplayer.column(np.arange(len(first)) * G, G, U, devices) // G
    tops[s, u] = np.maximum(np.maximum.reduceat(rows, lo), rows[hi])
  return tops


def sweep(seats: SeatsLayout, group: int, devices: int = 1) -> SeatSweep:
  """The counts of one sweep (one turn pass per stage) on `devices`."""
  tops = sub_batch_tops(seats, group, devices)
  S, U = tops.shape
  G = multiplayer.plan_sizes(seats, group, devices)[2]
  n, D = seats.players, devices
  steps = (tops + 1) * 2           # row steps: the pass, the forward pass
  per_device = steps.reshape(S, D, U // D).sum(axis=2) + U // D
  dependent = int(per_device.max(axis=1).sum())
  if seats.num_farkle > 1:
    blocks = -(-S // seats.stages_per_block)
    dependent += blocks * penalty_blocks.DOUBLINGS
  roll = bellman.roll_arrays(roll_tables.build(seats.rules))
  options = sum(int(np.prod(g.rows.shape)) for g in roll.groups)
  dice = roll.dice_states
  key_rows = int((tops + 1).sum()) * G               # padding included
  keys = seats.num_keys
  sets = sum(g.rows.shape[0] for g in roll.groups)
  whole = int((tops >= 0).sum()) * G * (seats.num_rows + 1)
  gathered = (key_rows * (options * 17 + n * 8)
              + whole * (options + n) * 8 + keys * n * 8)
  written = key_rows * dice * 16 + whole * sets + keys * n * 8
  live = seats.num_states // dice
  exchanged = S * U * G * n * 8 * (D - 1) // D
  counts = SweepCounts(dependent_steps=dependent, gathered_bytes=gathered,
                       xla_bytes_accessed=0.0, written_bytes=written,
                       column_steps=key_rows, live_rows=live)
  return SeatSweep(counts, S, U, G, exchanged)
