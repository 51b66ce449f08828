"""The wavefront's schedule: when each key runs, and in which column
(docs/model.md §4.3).

Keys of score sum s finish their turn pass at step x + x // bank_min (x the
largest sum - s) and start t_max(b) steps before. The steps are cut into
segments (`cut_segments`), each with as many columns as keys are live at
once within it (`assign_columns`); keys that need a slope (their farkle
target finishes with them) take a segment's first columns
(`segment_columns`). Host-side NumPy only: `solver.wavefront` turns the
result into device tables.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np

from farkle_jax.game.layout import StateLayout


class Segment(NamedTuple):
  """The columns of one segment of steps (NumPy here; `solver.wavefront`
  keeps them as int32 device arrays)."""
  col_keys: np.ndarray    # [W, L] keys each column runs, in order (pad: K)
  carry_from: np.ndarray  # [W] the column, in the segment before, of the
                          #   key that goes on in this column (0: none)


def finish_steps(layout: StateLayout) -> tuple[np.ndarray, np.ndarray]:
  """[K] step at which each key finishes and [K] step at which it starts.

  Steps are shifted so that the first key starts at step 0.
  """
  b, d, _, _ = layout.key_fields()
  x = 2 * (layout.num_scores - 1) - (b + d)
  finish = x + x // layout.bank_min
  start = finish - layout.t_max(b)
  return finish - start.min(), start - start.min()


def live_keys(start: np.ndarray, finish: np.ndarray) -> np.ndarray:
  """[N] keys live (between their start and finish) at each step."""
  live = np.zeros(int(finish.max()) + 2, np.int64)
  np.add.at(live, start, 1)
  np.add.at(live, finish + 1, -1)
  return np.cumsum(live)[:-1]


def column_count(layout: StateLayout) -> int:
  """The most keys live at one step: the widest segment's columns."""
  finish, start = finish_steps(layout)
  return int(live_keys(start, finish).max())


def cut_segments(live: np.ndarray, most: int, granule: int = 1,
                 move: float = 0.0) -> list[int]:
  """Segment boundaries [0, .., N] that minimize the column-steps
  sum(width x (length + move)), a segment's width being its most live keys
  rounded up to `granule` and `move` the cost, in column-steps, of moving
  a column's ring into a segment (dynamic programming over the cut
  points)."""
  n = len(live)
  most = max(1, min(most, n))
  widths = []
  for b in range(1, n + 1):
    width = np.maximum.accumulate(live[:b][::-1])[::-1]   # max live[a:b]
    widths.append(-(-width // granule) * granule)
  best = [np.r_[0.0, np.full(n, np.inf)]]
  back = np.zeros((most + 1, n + 1), np.int64)
  for m in range(1, most + 1):
    prev, cur = best[-1], np.full(n + 1, np.inf)
    extra = move if m > 1 else 0.0
    for b in range(1, n + 1):
      total = prev[:b] + widths[b - 1] * (b - np.arange(b) + extra)
      a = int(np.argmin(total))
      cur[b], back[m, b] = total[a], a
    best.append(cur)
  m = int(np.argmin([c[n] for c in best]))
  cuts, b = [n], n
  for k in range(m, 0, -1):
    b = int(back[k, b])
    cuts.append(b)
  return cuts[::-1]


def assign_columns(start: np.ndarray, finish: np.ndarray, keys: np.ndarray
                   ) -> tuple[list[list[int]], np.ndarray]:
  """Columns for `keys` (intervals clipped to one segment): keys whose
  steps overlap get different columns, and no more columns are used than
  keys are live at once (greedy interval partitioning by start step).

  Returns:
    The keys of each column in order, and [len(keys)] the column of each.
  """
  free: list[tuple[int, int]] = []  # (finish step of its last key, column)
  columns: list[list[int]] = []
  col = np.zeros(len(keys), np.int64)
  for i in np.lexsort((finish[keys], start[keys])):
    if free and free[0][0] < start[keys[i]]:
      _, c = heapq.heappop(free)
    else:
      c = len(columns)
      columns.append([])
    columns[c].append(int(keys[i]))
    col[i] = c
    heapq.heappush(free, (int(finish[keys[i]]), c))
  return columns, col


def segment_columns(start, finish, sloped, bounds, granule, K):
  """The columns of each segment and the column of every key at every
  step it finishes.

  The keys that need a slope (`sloped`: their farkle target finishes with
  them) take the first columns of a segment, the others the rest, so only
  the first columns keep slopes.

  Returns:
    (segments, [M] widths, [M] widths of the sloped columns, [K] column at
    the finish).
  """
  segments, widths, sloped_widths = [], [], []
  finish_col = np.zeros(K, np.int64)
  before = np.zeros(K, np.int64)   # column in the previous segment
  for a, b in zip(bounds[:-1], bounds[1:]):
    runs, cols, offset = [], [], 0
    for pool in (sloped, ~sloped):
      keys = np.nonzero(pool & (start < b) & (finish >= a))[0]
      columns, col = assign_columns(np.maximum(start, a),
                                    np.minimum(finish, b - 1), keys)
      width = -(-len(columns) // granule) * granule
      runs += columns + [[]] * (width - len(columns))
      cols.append((keys, col + offset))
      offset += width
      if pool is sloped:
        sloped_widths.append(width)
    width = offset
    col_keys = np.full((width, max(map(len, runs)) + 1), K, np.int64)
    for c, run in enumerate(runs):
      col_keys[c, :len(run)] = run
    carry = np.zeros(width, np.int64)
    for keys, col in cols:
      goes_on = start[keys] < a
      carry[col[goes_on]] = before[keys[goes_on]]
      ends = (finish[keys] >= a) & (finish[keys] < b)
      finish_col[keys[ends]] = col[ends]
      before[keys] = col
    segments.append(Segment(col_keys, carry))
    widths.append(width)
  return segments, widths, sloped_widths, finish_col
