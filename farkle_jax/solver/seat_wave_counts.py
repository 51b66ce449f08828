"""What one sweep of the N-player wavefront is charged by XLA (docs/model.md
§8): each compiled loop body (a chunk's row, a chunk's move, a finishing
group) at its trip count, as `wave_counts.xla_bytes` counts two players,
for this machine or for the GPU aimed at (`compile_target`); with the
fused kernels (`seat_wave_kernel`), their own bytes from their plans added,
XLA not seeing into a custom call. The plan's own counts, from the sizes,
are `seat_wave_schedule`'s.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import seat_wavefront, sweep_counts, vector_pass
from farkle_jax.solver import wave_counts, wavefront
from farkle_jax.solver.seat_wavefront import SeatWavePlan, SeatWaveTables
from farkle_jax.solver.wave_row import INDEX_BYTES, SLOPE_DTYPE


def busy_rows(tables: SeatWaveTables, plan: SeatWavePlan, tile: int) -> int:
  """Column-steps the fused kernel computes in one sweep: the columns of
  the tiles holding a live column at a step (`wave_counts.busy_steps`)."""
  steps = wave_counts.busy_steps(tables, plan, np.asarray(tables.bounds),
                                 tile)
  return sum(int(s.sum()) for s in steps) * tile


def kernel_bytes(tables: SeatWaveTables, plan: SeatWavePlan, dtype,
                 busy: int | None = None) -> int:
  """Bytes one sweep's compiled kernels move, from their plans (0 for
  XLA's step, and for the kernels interpreted, whose ops XLA counts):
  per column-step computed (`busy`; default every one), each distinct
  target's C channel rows read, what a farkle and a bank are worth read,
  six rows of C channels written; the moves read and write each moved
  column's ring and read its carry."""
  if plan.kernel != "pallas":
    return 0
  size, C = jnp.dtype(dtype).itemsize, vector_pass.channels(
      plan.seats.players)
  widths = np.asarray(plan.widths)
  if busy is None:
    busy = int(np.dot(np.diff(np.asarray(tables.bounds)), widths))
  per_column = (plan.row.num_targets + 2 + N_DICE) * C * size
  ring = plan.ring_rows * N_DICE * C * int(widths.sum()) * size
  return int(busy * per_column + 2 * ring + widths.sum() * INDEX_BYTES)


def xla_bytes(tables: SeatWaveTables, plan: SeatWavePlan, dtype,
              busy: int | None = None) -> float:
  """XLA's bytes accessed by one sweep: each loop body compiled alone and
  counted at its trip count, the kernels' own bytes (`kernel_bytes` of the
  `busy` column-steps) added."""
  # The program of one device, its rings whole (not in column blocks).
  plan = plan._replace(blocks=1)
  shape, C = jax.ShapeDtypeStruct, vector_pass.channels(plan.seats.players)
  rows = plan.ring_rows * N_DICE * C
  columns = wavefront._Columns(
      shape((plan.seats.num_keys + 1, plan.seats.players), jnp.dtype(dtype)),
      shape((2, rows, plan.width), jnp.dtype(dtype)),
      shape((2, 1, 1), SLOPE_DTYPE), shape((plan.width,), jnp.int32),
      shape((), jnp.bool_))
  index = shape((), jnp.int32)
  chunk = sweep_counts.bytes_accessed(
      lambda tau, m, j, c, tables: seat_wavefront._chunk_step(
          tau, m, j, c, tables, plan, lambda x: x),
      index, index, index, columns, tables, donate=3)
  move = sweep_counts.bytes_accessed(
      lambda m, j, c, tables: wavefront._move_chunk(
          m, j, c, tables, plan, False, lambda x: x),
      index, index, columns, tables, donate=2)
  finish = sweep_counts.bytes_accessed(
      lambda tau, m, c, tables: c._replace(
          vector=seat_wavefront._finish_group(c, tau, m, tables, plan)),
      index, index, columns, tables, donate=2)
  lengths = np.diff(np.asarray(tables.bounds))
  chunks = np.asarray(plan.widths) // plan.chunk
  return float(np.dot(lengths, chunks) * chunk + plan.span * finish
               + chunks.sum() * move + kernel_bytes(tables, plan, dtype, busy))
