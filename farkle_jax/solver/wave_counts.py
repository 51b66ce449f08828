"""What one wavefront sweep moves, counted two ways (docs/model.md §4.4):
from its plan (`sweep_bytes`: what the sweep needs), and by XLA's cost
analysis of each compiled loop body at its trip count (`xla_bytes`: what
the program, as compiled for this machine or for the GPU aimed at, is
charged), with the Pallas kernels' own bytes (`kernel_bytes`) where they
run, XLA not seeing into a custom call."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import sweep_counts
from farkle_jax.solver.wave_columns import ring_row
from farkle_jax.solver.wave_row import INDEX_BYTES, SLOPE_DTYPE, column_bytes
from farkle_jax.solver.wavefront import (
    WavePlan, WaveTables, _Columns, _chunk_step, _finish_group, _move_chunk,
    segment_keys)


class SweepBytes(NamedTuple):
  """Bytes one sweep moves, counted from the plan (docs/model.md §4.3)."""
  gathered: int   # reads by gathers: ring blocks, start values, key tables
  written: int    # ring rows, start values, moved rings
  column_steps: int  # columns evaluated, idle ones included
  live_rows: int  # key-rows that are live (the model's states / 6)


def sweep_bytes(plan: WavePlan, dtype) -> SweepBytes:
  """What one sweep reads and writes, from its schedule: `column_bytes`
  for every column at every step of its segment; per segment, the rings
  of its columns moved; per finishing key, its solve."""
  size, slope = jnp.dtype(dtype).itemsize, jnp.dtype(SLOPE_DTYPE).itemsize
  lengths = np.diff(plan.bounds)
  column_steps = int(np.dot(lengths, plan.widths))
  sloped_steps = int(np.dot(lengths, plan.sloped))
  read, write = column_bytes(plan.row, size, False)
  extra_read, extra_write = (a - b for a, b in zip(
      column_bytes(plan.row, size), (read, write)))
  moved = _ring_bytes(plan, size, slope) + _carry_bytes(plan)
  keys = plan.layout.num_keys
  finishing = keys * (3 * size + slope + 5 * INDEX_BYTES)
  rows = plan.layout.num_states // N_DICE
  return SweepBytes(
      int(column_steps * read + sloped_steps * extra_read + moved
          + finishing),
      int(column_steps * write + sloped_steps * extra_write + moved
          + keys * size), column_steps, rows)


def xla_bytes(tables: WaveTables, plan: WavePlan, dtype,
              busy: BusyRows | None = None) -> float:
  """XLA's bytes accessed by one sweep: each loop body compiled alone (for
  the GPU aimed at, if any) and counted at its trip count; with the fused
  kernels, their own bytes (`kernel_bytes` of the `busy` rows) added."""
  # The program of one device, its rings whole (not in column blocks).
  plan = plan._replace(blocks=1)
  rows, W, Ws = plan.ring_rows * N_DICE, plan.width, plan.sloped_width
  shape = jax.ShapeDtypeStruct
  columns = _Columns(shape((plan.layout.padded_size,), jnp.dtype(dtype)),
                     shape((2, rows, W), jnp.dtype(dtype)),
                     shape((2, rows, Ws), SLOPE_DTYPE),
                     shape((W,), jnp.int32), shape((), jnp.bool_))
  index = shape((), jnp.int32)
  plain = lambda x: x

  def chunk(sloped):
    return sweep_counts.bytes_accessed(
        lambda tau, m, j, c, tables: _chunk_step(tau, m, j, c, tables, plan,
                                                 sloped, plain),
        index, index, index, columns, tables, donate=3)

  def move(sloped):
    return sweep_counts.bytes_accessed(
        lambda m, j, c, tables: _move_chunk(m, j, c, tables, plan, sloped,
                                            plain),
        index, index, columns, tables, donate=2)

  finish = sweep_counts.bytes_accessed(
      lambda tau, c, tables: c._replace(vector=_finish_group(
          c.vector, tau, lambda cols: ring_row(c.ring, 0, tau, 1)[cols],
          lambda cols: ring_row(c.tangent, 0, tau, 1)[
              jnp.minimum(cols, Ws - 1)], tables, plan)),
      index, columns, tables, donate=1)
  lengths = np.diff(plan.bounds)
  sloped = np.asarray(plan.sloped) // plan.chunk
  other = np.asarray(plan.widths) // plan.chunk - sloped
  return float(np.dot(lengths, sloped) * chunk(True)
               + np.dot(lengths, other) * chunk(False)
               + plan.span * finish + sloped.sum() * move(True)
               + other.sum() * move(False) + kernel_bytes(plan, dtype,
                                                          busy))


class BusyRows(NamedTuple):
  """Rows the fused kernel computes in one sweep: the columns of the tiles
  that hold a live column at a step (it skips the others)."""
  rows: int     # all such column-steps
  sloped: int   # of them, in the sloped chunks


def busy_rows(tables: WaveTables, plan: WavePlan, tile: int) -> BusyRows:
  """`BusyRows` of a sweep in tiles of `tile` columns, from the schedule
  (`busy_steps`)."""
  rows = sloped = 0
  for m, steps in enumerate(busy_steps(tables, plan, plan.bounds, tile)):
    rows += int(steps.sum()) * tile
    sloped += int(steps[:plan.sloped[m] // tile].sum()) * tile
  return BusyRows(rows, sloped)


def busy_steps(tables, plan, bounds, tile: int) -> list[np.ndarray]:
  """Per segment, [W_m / tile] the steps at which each tile of `tile`
  columns holds a live column: a column runs key k at steps finish[k] -
  t_max[k] .. finish[k]. Any wavefront's tables and plan (two players or
  more: `col_keys`, `finish`, `t_max`, `widths`); `bounds` [M + 1] the
  first step of each segment."""
  finish, t_max = np.asarray(tables.finish), np.asarray(tables.t_max)
  K = finish.shape[0] - 1    # the pad key's index
  out = []
  for m, width in enumerate(plan.widths):
    keys = segment_keys(tables, plan, m)[0]                  # [W, L]
    lo, hi = bounds[m], bounds[m + 1]
    first = np.maximum(finish[keys] - t_max[keys], lo) - lo
    last = np.minimum(finish[keys], hi - 1) - lo
    live = (keys < K) & (first <= last)
    tile_of = np.broadcast_to((np.arange(width) // tile)[:, None],
                              keys.shape)[live]
    marks = np.zeros((width // tile, hi - lo + 1), np.int64)
    np.add.at(marks, (tile_of, first[live]), 1)
    np.add.at(marks, (tile_of, last[live] + 1), -1)
    out.append((np.cumsum(marks, axis=1)[:, :-1] > 0).sum(axis=1))
  return out


def kernel_bytes(plan: WavePlan, dtype, busy: BusyRows | None = None
                 ) -> int:
  """Bytes one sweep's Pallas kernels move, from their plans (XLA's cost
  analysis does not see into a custom call): the row kernel reads each
  distinct target's ring row of its columns and writes six rows (of the
  `busy` rows, if given: the tiles it does not skip); the move kernel
  reads and writes each moved column's ring. 0 for XLA's step, and for
  the kernels interpreted (a CPU), whose ops XLA counts itself."""
  if plan.kernel != "pallas":
    return 0
  size, slope = jnp.dtype(dtype).itemsize, jnp.dtype(SLOPE_DTYPE).itemsize
  lengths = np.diff(plan.bounds)
  busy = busy or BusyRows(int(np.dot(lengths, plan.widths)),
                          int(np.dot(lengths, plan.sloped)))
  per_column = (plan.row.num_targets + N_DICE) * size
  per_sloped = (plan.row.num_targets + N_DICE) * slope
  return int(busy.rows * per_column + busy.sloped * per_sloped
             + 2 * _ring_bytes(plan, size, slope) + _carry_bytes(plan))


def _ring_bytes(plan: WavePlan, size: int, slope: int) -> int:
  """Bytes of the rings of every segment's columns (values, and slopes of
  the sloped ones): what one sweep's moves read, and again write."""
  ring = plan.ring_rows * N_DICE
  return sum(ring * (w * size + ws * slope)
             for w, ws in zip(plan.widths, plan.sloped))


def _carry_bytes(plan: WavePlan) -> int:
  """Bytes of the carry tables the moves read."""
  return sum(plan.widths) * INDEX_BYTES
