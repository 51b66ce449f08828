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

import functools
from typing import NamedTuple

import numpy as np

from farkle_jax.game.layout import StateLayout

# Chunks a step of the widest segment is cut into: each is a dependent loop
# step (a few microseconds of loop control on a GPU); fewer chunks are
# wider, and a segment's last chunk runs idle columns. For facebook, 4
# gives the least projected time (48 ms a sweep, against 50-77 ms for 3,
# 6, 8, 12 or 16 and 62 ms for 1: BENCHMARKS.md). Small games take one
# chunk of at least MIN_CHUNK columns a step.
CHUNKS = 4
# The fused kernel's chunks: a program per tile and dice count keeps an
# H200 busy at half as many loop steps (a facebook sweep 0.161 s in 2
# chunks, 0.189 s in 4, 0.167 s in 1: BENCHMARKS.md).
KERNEL_CHUNKS = 2
MIN_CHUNK = 2048


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
  finish = _finish_of_sum(layout, b + d)
  start = finish - layout.t_max(b)
  return finish - start.min(), start - start.min()


def _finish_of_sum(layout: StateLayout, sums: np.ndarray) -> np.ndarray:
  """The step (before the shift) at which keys of score sum b + d finish."""
  x = 2 * (layout.num_scores - 1) - sums
  return x + x // layout.bank_min


def solved_sums(finish: np.ndarray, sums: np.ndarray, span: int
                ) -> np.ndarray:
  """[span] the lowest score sum whose keys have all finished before each
  step (-1 before any has): a run's first sweep reads a penalty farkle's
  target, not solved yet, at the key of that sum nearest it.

  Args:
    finish: [K] the step at which each key finishes; sums: [K] its b + d.
  """
  none = np.iinfo(np.int64).max
  lowest = np.full(span + 1, none)
  np.minimum.at(lowest, finish + 1, sums)
  lowest = np.minimum.accumulate(lowest)[:span]
  return np.where(lowest == none, -1, lowest)


PAIRS_AT_ONCE = 2**20   # (b, d) pairs in a block of `most_live_keys`


@functools.lru_cache(maxsize=64)
def most_live_keys(layout: StateLayout) -> int:
  """`live_keys(...).max()` from the banked-score pairs (b, d), which alone
  set a key's steps, a block of b at a time: memory estimates run before
  anything is built and must not build the per-key arrays (70-odd bytes a
  key) of games far too large to solve."""
  S = layout.num_scores
  t_max = np.asarray(layout.t_max(np.arange(S)), np.int64)
  sums = np.arange(2 * S - 1)
  finish = _finish_of_sum(layout, sums)       # falls as b + d grows
  low = int((finish[S - 1:] - t_max).min())   # each b's largest d
  change = np.zeros(int(finish[0]) - low + 2, np.int64)
  change[finish - low + 1] -= np.minimum(sums, 2 * S - 2 - sums) + 1
  rows = max(1, PAIRS_AT_ONCE // S)
  for b0 in range(0, S, rows):
    b = np.arange(b0, min(S, b0 + rows))[:, None]
    start = finish[b + np.arange(S)] - t_max[b] - low
    change += np.bincount(start.ravel(), minlength=len(change))
  return int(np.cumsum(change).max()) * (layout.num_keys // S**2)


def live_keys(start: np.ndarray, finish: np.ndarray) -> np.ndarray:
  """[N] keys live (between their start and finish) at each step."""
  live = np.zeros(int(finish.max()) + 2, np.int64)
  np.add.at(live, start, 1)
  np.add.at(live, finish + 1, -1)
  return np.cumsum(live)[:-1]


def cut_segments(live: np.ndarray, most: int, granule: int = 1,
                 move: float = 0.0, each: float = 0.0) -> list[int]:
  """Segment boundaries [0, .., N] that minimize the column-steps
  sum(width x (length + move) + each), a segment's width being its most
  live keys rounded up to `granule`, `move` the cost, in column-steps, of
  moving a column's ring into a segment and `each` a cost of every segment
  after the first (dynamic programming over the cut points)."""
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
    extra, fixed = (move, each) if m > 1 else (0.0, 0.0)
    for b in range(1, n + 1):
      total = prev[:b] + widths[b - 1] * (b - np.arange(b) + extra) + fixed
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
                   ) -> tuple[int, np.ndarray]:
  """Columns for `keys` (intervals clipped to one segment): keys whose
  steps overlap get different columns, and no more columns are used than
  keys are live at once (greedy interval partitioning by start step: when
  no column is free, every column holds a key live at that step). Keys
  that start at one step are placed together: a few hundred NumPy steps
  for the published model's 562,500 keys.

  Returns:
    The number of columns, and [len(keys)] the column of each key.
  """
  s, f = start[keys], finish[keys]
  order = np.lexsort((f, s))
  steps, first = np.unique(s[order], return_index=True)
  cut = np.append(first, len(order))
  col = np.zeros(len(keys), np.int64)
  free_at = np.zeros(0, np.int64)   # last step of each column's last key
  for i, step in enumerate(steps):
    group = order[cut[i]:cut[i + 1]]
    free = np.flatnonzero(free_at < step)
    if len(free) < len(group):
      more = len(group) - len(free)
      free = np.append(free, np.arange(len(free_at), len(free_at) + more))
      free_at = np.append(free_at, np.zeros(more, np.int64))
    use = free[:len(group)]
    col[group] = use
    free_at[use] = f[group]
  return len(free_at), col


def _column_keys(keys: np.ndarray, col: np.ndarray, start: np.ndarray,
                 width: int, K: int) -> np.ndarray:
  """[width, L + 1] the keys of each column in start order (pad: K, at
  least once at the end of every column)."""
  order = np.lexsort((start[keys], col))
  keys, col = keys[order], col[order]
  first = np.searchsorted(col, col)            # each column's first entry
  place = np.arange(len(col)) - first
  depth = int(place.max()) + 2 if len(col) else 1
  out = np.full((width, depth), K, np.int64)
  out[col, place] = keys
  return out


def segment_columns(start, finish, sloped, bounds, granule, K,
                    pool_granule=None):
  """The columns of each segment and the column of every key at every
  step it finishes.

  The keys that need a slope (`sloped`: their farkle target finishes with
  them) take the first columns of a segment, the others the rest, so only
  the first columns keep slopes. The sloped columns are a multiple of
  `pool_granule` (default `granule`), all of them of `granule`.

  Returns:
    (segments, [M] widths, [M] widths of the sloped columns, [K] column at
    the finish).
  """
  pool_granule = pool_granule or granule
  segments, widths, sloped_widths = [], [], []
  finish_col = np.zeros(K, np.int64)
  before = np.zeros(K, np.int64)   # column in the previous segment
  for a, b in zip(bounds[:-1], bounds[1:]):
    cols, offset = [], 0
    for pool in (sloped, ~sloped):
      keys = np.nonzero(pool & (start < b) & (finish >= a))[0]
      count, col = assign_columns(np.maximum(start, a),
                                  np.minimum(finish, b - 1), keys)
      size = pool_granule if pool is sloped else 1
      width = -(-count // size) * size
      if pool is not sloped:   # the whole segment in whole granules
        width = -(-(offset + width) // granule) * granule - offset
      cols.append((keys, col + offset))
      offset += width
      if pool is sloped:
        sloped_widths.append(width)
    width = offset
    col_keys = _column_keys(np.concatenate([k for k, _ in cols]),
                            np.concatenate([c for _, c in cols]), start,
                            width, K)
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


def doubling_rounds(partner: np.ndarray) -> int:
  """Rounds that take every node of the same-sum farkle graphs to the end
  of its chain or onto its cycle."""
  longest = max(1, int((partner >= 0).sum(axis=1).max()))
  return max(1, int(np.ceil(np.log2(longest))) + 1)


def finishing_groups(finish: np.ndarray, farkle_key: np.ndarray,
            finish_col: np.ndarray) -> tuple[np.ndarray, ...]:
  """[N, G] the keys finishing at each step (pad: K), their columns, and
  the group index of each one's farkle target (-1: another group)."""
  K, steps = len(finish), int(finish.max()) + 1
  order = np.argsort(finish, kind="stable")
  cut = np.searchsorted(finish[order], np.arange(steps + 1))
  G = int(np.diff(cut).max())
  group_keys = np.full((steps, G), K, np.int64)
  group_cols = np.zeros((steps, G), np.int64)
  partner = np.full((steps, G), -1, np.int64)
  local = np.full(K + 1, -1, np.int64)
  for s in range(steps):
    keys = order[cut[s]:cut[s + 1]]
    group_keys[s, :len(keys)] = keys
    group_cols[s, :len(keys)] = finish_col[keys]
    local[keys] = np.arange(len(keys))
    partner[s, :len(keys)] = local[farkle_key[keys]]
    local[keys] = -1
  return group_keys, group_cols, partner


def chunk_columns(live: np.ndarray, granule: int,
                  chunks: int | None = None) -> int:
  """C: columns per loop iteration, a multiple of `granule`, such that the
  step with the most live keys takes about `chunks` (default CHUNKS)
  iterations (at most one for a game of up to MIN_CHUNK live keys)."""
  most = int(live.max())   # keys needing slopes and the others, each
  per = max(-(-most // (chunks or CHUNKS)),
            min(MIN_CHUNK, 2 * most))   # up to most
  return max(granule, -(-per // granule) * granule)


def layout_chunk(layout: StateLayout, granule: int,
                 chunks: int | None = None) -> tuple[int, int]:
  """(C, the most keys live at once) of `layout`'s wavefront."""
  most = most_live_keys(layout)
  return chunk_columns(np.asarray([most]), granule, chunks), most


def ring_columns(layout: StateLayout, granule: int) -> int:
  """The most columns the wavefront's rings can have, however its steps
  are cut (CHUNKS or KERNEL_CHUNKS): the most keys live at once in whole
  chunks, and a chunk more where those that keep slopes and the others
  each round up."""
  most = most_live_keys(layout)
  return max((-(-most // chunk) + 1) * chunk
             for chunk in (chunk_columns(np.asarray([most]), granule, n)
                           for n in (CHUNKS, KERNEL_CHUNKS)))
