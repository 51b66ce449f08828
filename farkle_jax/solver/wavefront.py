"""The GPU-shaped solve: every key's turn pass at once, as a wavefront.

The ordered method (docs/model.md §4.2) walks 400-odd stages one after the
other, each a backward pass over t: tens of thousands of small dependent loop
steps per sweep, which suit a CPU and leave an accelerator waiting on loop
control. This method (docs/model.md §4.3) keeps the ordered method's
dependencies and runs them as one loop of a few hundred large steps, and
moves as few bytes as it can:

* Keys of score sum s (index units) finish their turn pass (reach row t = 0)
  at step `finish(s) = x + x // bank_min` with x = the largest sum - s, and
  process row t at step finish(s) - t. Banking t >= bank_min from sum s reads
  the start value of sum s + t, which finished at a step before
  finish(s) - t, so every bank read is final for this sweep, as in the
  ordered method.
* A farkle leads to the same sum (read at its value before this sweep) or,
  after the penalty, to a lower sum (read at its previous value, as in the
  ordered method). Each key carries the slope of its values in its farkle
  value; when a sum finishes, its start values are solved together with
  their same-sum farkle targets (pointer doubling on the affine models),
  which is exact when the policy does not change.
* Keys run in *columns*; each column keeps a ring of the rows it wrote at the
  last `ring_rows` steps. Row t + g of a key was written g steps before row
  t, so every column reads the target (g, n') of a row at the same ring
  position, (step - g) mod ring_rows: a step reads whole ring rows, one per
  distinct target of a row (`bellman.RowPlan`: 102 for facebook, against
  823 options), and takes each score set's best from that block.
* The steps are cut into segments, each with as many columns as keys are
  live at once within it (rounded up to whole chunks of C columns); at a
  segment's start the rings of the keys that go on move to their new
  columns (two rings, each segment writing the other). The work per step
  follows the live keys, not the largest number of them.
* Only the keys whose farkle target finishes with them need slopes: they
  take a segment's first columns, and only those chunks keep slopes.
* One program for any game: a loop over the segments (their tables are
  data), in each a loop over its steps, in each a loop over its chunks of
  C columns, a chunk's row computed from index tables (`solver.wave_row`).
  Nothing is unrolled per segment, target or option, so a sweep compiles
  in seconds whatever the game; each chunk is a dependent loop step (about
  CHUNKS per step at the widest).

One sweep costs one evaluation of every model state (plus the columns idle
within a segment) in `span` wave steps (587 for facebook at L = -2500) and
`steps` dependent loop steps, chunks and moves counted (1,476, against
about 80,000 for the ordered method). The schedule is
`solver.wave_schedule`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from farkle_jax.game.layout import N_DICE, StateLayout, turn_row
from farkle_jax.solver import (bellman, change_norm, placement,
                               wave_columns, wave_kernel, wave_schedule)
from farkle_jax.solver.wave_row import (
    SLOPE_DTYPE, TILE, column_bytes, option_table, row_step)
from farkle_jax.solver.wave_schedule import (
    chunk_columns, cut_segments, doubling_rounds, finish_steps,
    finishing_groups, live_keys, segment_columns, solved_sums)

SEGMENTS = 16         # most segments a sweep's steps are cut into


class WaveTables(NamedTuple):
  """Schedule and per-key index tables of the wavefront (device arrays).
  Segment m's columns are chunks [0, chunks[m]) of C columns, the first
  sloped[m] of them keeping slopes."""
  col_keys: jax.Array    # [sum W_m L_m + C L] int32 keys each column
                         #   runs, in order: key_at[m] + column * depth[m]
                         #   + i (pad: K)
  carry_from: jax.Array  # [sum W_m + W] int32 column, in the segment
                         #   before, of the key that goes on (col_at[m] + c)
  bounds: jax.Array      # [M + 1] int32 first step of each segment, then N
  key_at: jax.Array      # [M] int32 where the segment's col_keys start
  depth: jax.Array       # [M] int32 L_m, keys a column runs in the segment
  col_at: jax.Array      # [M] int32 where the segment's carry_from starts
  chunks: jax.Array      # [M] int32 W_m / C
  sloped: jax.Array      # [M] int32 sloped columns / C
  finish: jax.Array      # [K + 1] int32 step at which the key reaches t = 0
  t_max: jax.Array       # [K + 1] int32 highest non-terminal row of the key
  position: jax.Array    # [K + 1] int32 padded-vector position (pad: sink)
  farkle: jax.Array      # [K + 1] int32 padded position of the farkle target
  stale: jax.Array       # [K + 1] bool the farkle target finishes after
                         #   the key (a penalty farkle): a run's first
                         #   sweep reads the nearest solved key instead
  solved: jax.Array      # [N] int32 the lowest score sum finished before
                         #   each step (-1: none; wave_schedule.solved_sums)
  bank_base: jax.Array   # [K + 1] int32 padded bank position at t = 0
  group_keys: jax.Array  # [N, G] int32 keys finishing at each step (pad: K)
  group_cols: jax.Array  # [N, G] int32 their columns in that step's segment
  partner: jax.Array     # [N, G] int32 group index of the farkle target, -1
  farkle_prob: jax.Array  # [6]


class WavePlan(NamedTuple):
  """Static sizes of the wavefront (hashable: a jit constant). The loops
  run over the tables, so the program's size does not depend on the
  number of segments; the tuples below serve the counts."""
  layout: StateLayout
  relative: bool   # residual |dW| / W instead of |dW|
  span: int        # N, wave steps of one sweep
  steps: int       # dependent loop steps of one sweep (chunk iterations)
  ring_rows: int   # rows each column keeps
  rounds: int      # pointer-doubling rounds of a finishing group
  chunk: int       # C, columns a loop iteration evaluates
  depth: int       # L, the most keys a column runs in a segment
  bounds: tuple[int, ...]  # [M + 1] first step of each segment, then N
  widths: tuple[int, ...]  # [M] columns of each segment
  sloped: tuple[int, ...]  # [M] of those, the first that keep slopes
  row: bellman.RowPlan     # the distinct targets of a row
  kernel: str = "xla"      # a chunk's row: "xla", "pallas" (the fused
                           #   kernel), "interpret" (it, interpreted)
  blocks: int = 1          # D, the devices the columns split over: the
                           #   rings' column blocks (`wave_columns`)

  @property
  def width(self) -> int:
    """W, columns of the ring (the widest segment's)."""
    return max(self.widths)

  @property
  def sloped_width(self) -> int:
    return max(self.sloped)


def ring_rows(roll: bellman.RollArrays) -> int:
  """Rows a column keeps: the largest gain of one roll, in units, plus one."""
  most = max(int(np.asarray(g.rows).max()) for g in roll.groups)
  return turn_row(most, roll.dice_states) + 1


def _int32(x) -> jax.Array:
  return placement.on_device(x, np.int32)


def segment_tables(segs, bounds, widths, sloped_widths, chunk: int, K: int
                    ) -> dict[str, jax.Array]:
  """The `WaveTables` fields of the segments: their columns' keys and
  carries flat, with each segment's offsets and chunk counts."""
  depth = [s.col_keys.shape[1] for s in segs]
  return dict(
      col_keys=_int32(np.concatenate([s.col_keys.ravel() for s in segs]
                                     + [np.full(chunk * max(depth), K)])),
      carry_from=_int32(np.concatenate([s.carry_from for s in segs]
                                       + [np.zeros(max(widths), np.int64)])),
      bounds=_int32(bounds),
      key_at=_int32(np.cumsum([0] + [w * d for w, d in zip(widths, depth)])
                    [:-1]),
      depth=_int32(depth), col_at=_int32(np.cumsum([0] + widths[:-1])),
      chunks=_int32(np.asarray(widths) // chunk),
      sloped=_int32(np.asarray(sloped_widths) // chunk))


def build(layout: StateLayout, roll: bellman.RollArrays, relative: bool,
          devices: int = 1, segments: int | None = None,
          kernel: str = "xla") -> tuple[WaveTables, WavePlan]:
  """The schedule and index tables of the wavefront for one rule set.

  Args:
    layout: the state layout; roll: the roll tables.
    relative: the residual is |dW| / W instead of |dW|.
    devices: chunks are multiples of TILE x devices columns (split evenly,
      in whole tiles).
    segments: most segments the steps are cut into.
    kernel: how a chunk's row runs (`WavePlan.kernel`); the fused kernel
      takes wider chunks (`wave_schedule.KERNEL_CHUNKS`).
  """
  K = layout.num_keys
  finish, start = finish_steps(layout)
  span = int(finish.max()) + 1
  live = live_keys(start, finish)
  row = bellman.row_plan(roll)
  rows = ring_rows(roll)
  size = jnp.dtype(roll.set_weight.dtype).itemsize
  chunk = chunk_columns(live, TILE * devices,
                        wave_schedule.CHUNKS if kernel == "xla"
                        else wave_schedule.KERNEL_CHUNKS)
  move = (rows * N_DICE * (size + jnp.dtype(SLOPE_DTYPE).itemsize)
          / column_bytes(row, size)[0])
  bounds = cut_segments(live, segments or SEGMENTS, chunk, move)
  fields = layout.key_fields()
  sink = layout.sink
  target = layout.farkle_fields(fields)
  farkle_key = layout.key_index(*target)
  sloped = finish[farkle_key] == finish
  segs, widths, sloped_widths, finish_col = segment_columns(
      start, finish, sloped, bounds, chunk, K, TILE * devices)
  # A chunk with any sloped column keeps the slopes of all of its columns.
  sloped_widths = [-(-w // chunk) * chunk for w in sloped_widths]
  group_keys, group_cols, partner = finishing_groups(finish, farkle_key,
                                                     finish_col)
  depth = [s.col_keys.shape[1] for s in segs]
  lengths = np.diff(bounds)
  padded = lambda values, pad: _int32(np.append(values, pad))
  tables = WaveTables(
      **segment_tables(segs, bounds, widths, sloped_widths, chunk, K),
      finish=padded(finish, -1),
      t_max=padded(layout.t_max(fields[0]), -1),
      position=padded(layout.padded_index(*fields), sink),
      farkle=padded(layout.padded_index(*target), sink),
      # Not for a target that finishes with the key: its group solves it.
      stale=placement.on_device(np.append(~sloped, False)),
      solved=_int32(solved_sums(finish, fields[0] + fields[1], span)),
      bank_base=padded(layout.bank_base(fields), sink),
      group_keys=_int32(group_keys), group_cols=_int32(group_cols),
      partner=_int32(partner), farkle_prob=roll.farkle_prob)
  # Per segment: a move and each step, a loop iteration per chunk.
  steps = int(np.dot(lengths + 1, np.asarray(widths) // chunk))
  plan = WavePlan(layout, relative, span, steps, rows,
                  doubling_rounds(partner), chunk, max(depth), tuple(bounds),
                  tuple(widths), tuple(sloped_widths), row, kernel, devices)
  return tables, plan


def segment_keys(tables: WaveTables, plan: WavePlan, m: int
                 ) -> tuple[np.ndarray, np.ndarray]:
  """Segment m's [W_m, L_m] keys of each column and [W_m] columns they
  carry from (NumPy, for inspection)."""
  at, depth = int(tables.key_at[m]), int(tables.depth[m])
  width = plan.widths[m]
  keys = np.asarray(tables.col_keys[at:at + width * depth])
  col = int(tables.col_at[m])
  return (keys.reshape(width, depth),
          np.asarray(tables.carry_from[col:col + width]))


def _finish_group(vector, step, new, slope, tables: WaveTables,
                  plan: WavePlan):
  """Solves and writes the start values of the keys finishing at `step`,
  from `new(cols)` and `slope(cols)`: the six-dice row-0 values of those
  columns and their slopes (of the keys whose farkle target finishes with
  them; the others' are not read)."""
  keys = tables.group_keys[step]                         # [G]
  cols = tables.group_cols[step]
  value = new(cols)
  s = slope(cols).astype(value.dtype)
  x_hat = 1 - vector[tables.farkle[keys]]
  partner = tables.partner[step]
  inside = partner >= 0
  c = jnp.where(inside, value - s * x_hat + s, value)
  m = jnp.where(inside, -s, 0.0)
  p = jnp.where(inside, partner, jnp.arange(partner.shape[0]))
  for _ in range(plan.rounds):  # unrolled: a handful of small gathers
    c, m, p = c + m * c[p], m * m[p], p[p]
  position = tables.position[keys]
  on_cycle = p == jnp.arange(p.shape[0])
  # A node back on itself closes its cycle exactly; any other node still
  # pointing somewhere reads that node (exact when it is a closed cycle,
  # else the value before this sweep: the fixed point is the same).
  closed = jnp.where(on_cycle, c / (1 - m), c + m * vector[position[p]])
  x = jnp.where(on_cycle, closed, c + m * closed[p])
  # A tangent taken far from the solution (a run's first sweep) can step
  # past a bound where values are tiny (-3.2e-6 seen on facebook); the
  # fixed point lies inside [0, 1], and projecting on it only helps.
  return vector.at[position].set(jnp.clip(x, 0.0, 1.0))


class _Columns(NamedTuple):
  """Loop state of a sweep."""
  vector: jax.Array   # [V] padded W0
  ring: jax.Array     # [2, R * 6, W] values written at the last R steps:
                      #   segment m's in ring[m % 2], the other the last's
                      #   ([2, R * 6, D, W / D] over D devices: the
                      #   column axes of `wave_columns`, here and below)
  tangent: jax.Array  # [2, R * 6, Ws] slopes of the first Ws columns
  pointer: jax.Array  # [W] int32 the current key's place in its column
  fresh: jax.Array    # [] bool the vector holds initial values (a run's
                      #   first sweep reads its penalty farkles at solved
                      #   keys)


class _ChunkKeys(NamedTuple):
  """What a chunk's C columns run at one step."""
  pointer: jax.Array  # [C] int32 each column's place in its keys
  key: jax.Array      # [C] int32 the key it runs
  t: jax.Array        # [C] row of that key (< 0 or > t_max: idle)
  margin: jax.Array   # [C] gains past it win (t_max - t)


def _chunk_keys(tau, m, j, c: _Columns, tables: WaveTables, plan: WavePlan,
                split) -> _ChunkKeys:
  """The keys and rows of chunk j of segment m at step `tau`."""
  C, first = plan.chunk, j * plan.chunk
  pointer = split(wave_columns.chunk(c.pointer, first, C, plan.blocks))
  depth = tables.depth[m]
  # The chunk's columns' keys, sliced first: a gather is charged its source.
  col_keys = jax.lax.dynamic_slice_in_dim(
      tables.col_keys, tables.key_at[m] + first * depth, C * plan.depth)
  at_key = jnp.arange(C) * depth
  key = col_keys[at_key + pointer]
  pointer = jnp.minimum(pointer + (tables.finish[key] < tau), depth - 1)
  key = col_keys[at_key + pointer]
  t = tables.finish[key] - tau
  return _ChunkKeys(pointer, key, t, tables.t_max[key] - t)


def _chunk_step(tau, m, j, c: _Columns, tables: WaveTables, plan: WavePlan,
                sloped: bool, split) -> _Columns:
  """Row `tau` of the C columns of chunk j of segment m."""
  layout, first = plan.layout, j * plan.chunk
  pointer, key, t, margin = _chunk_keys(tau, m, j, c, tables, plan, split)
  base = tables.bank_base[key]
  t_bank = jnp.clip(t, 0, layout.num_rows)
  # Where the farkle and the bank read the start values (-1: no bank).
  # A run's first sweep reads a penalty farkle's target, which holds only
  # the initial value, at the nearest key solved already (docs/model.md
  # §4.3): the error of a guess of 0.5 would take a sweep per penalty to
  # travel out.
  farkle, total = tables.farkle[key], tables.solved[tau]
  guessed = c.fresh & tables.stale[key] & (total >= 0)
  reads = (jnp.where(guessed, layout.raised_key(farkle, total, jnp), farkle),
           jnp.where(t >= layout.bank_floor_at(base, jnp),
                     layout.bank_position(base, t_bank, jnp), -1))
  busy = (t >= 0) & (margin >= 0)
  ring, tangent = _write_row(c, tau, m, first, margin, busy, reads, tables,
                             plan, sloped, split)
  return c._replace(ring=ring, tangent=tangent,
                    pointer=wave_columns.put_chunk(c.pointer, pointer, (),
                                                   first, plan.blocks))


def _write_row(c: _Columns, tau, m, first, margin, busy, reads,
               tables: WaveTables, plan: WavePlan, sloped: bool, split
               ) -> tuple[jax.Array, jax.Array]:
  """The rings with the chunk's six new rows (and slopes, if `sloped`)
  written: XLA's step, or the fused kernel (`plan.kernel`), which skips
  the tiles whose columns are all idle (`busy` [C] false: no key reads an
  idle column's rows). `reads`: [C] positions of the farkle's and the
  bank's start values (-1: no bank)."""
  rows, row, C = plan.ring_rows, plan.row, plan.chunk
  gains = np.asarray(row.gains)
  source = ((tau - gains) % rows) * N_DICE + np.asarray(row.dice)   # [D]
  cur, at = m % 2, (tau % rows) * N_DICE
  options = option_table(row)
  interpret = plan.kernel == "interpret"
  if plan.kernel != "xla" and wave_kernel.TUNING.held:
    return wave_kernel.held_row(
        c.ring, c.tangent, jnp.stack(wave_columns.starts(cur, at, first)),
        source.astype(jnp.int32), tables.farkle_prob.astype(c.ring.dtype),
        margin.astype(jnp.int32), c.vector,
        *(r.astype(jnp.int32) for r in reads), busy, row=row, sloped=sloped,
        interpret=interpret)
  if plan.kernel != "xla":
    # Each option's ring row and gain, ready: the kernel reads one table
    # entry before an option's row, not two in a chain.
    return wave_kernel.chunk_row(
        c.ring, c.tangent, jnp.stack(wave_columns.starts(cur, at, first)),
        source.astype(jnp.int32)[options.index],
        jnp.asarray(gains[options.index], jnp.int32),
        jnp.asarray(options.weight, c.ring.dtype),
        tables.farkle_prob.astype(c.ring.dtype), margin.astype(jnp.int32),
        c.vector, *(r.astype(jnp.int32) for r in reads), busy,
        spans=options.spans, sloped=sloped, interpret=interpret)
  x_farkle = 1 - c.vector[reads[0]]
  bank = jnp.where(reads[1] >= 0, 1 - c.vector[jnp.maximum(reads[1], 0)],
                   -jnp.inf)
  read = lambda ring: wave_columns.chunk_rows(ring, cur, first, source, C,
                                             plan.blocks)
  # Each distinct target's ring row once; gains past a key's last row win.
  won = split(gains[:, None] > margin[None])                        # [D, C]
  block = jnp.where(won, 1.0, read(c.ring))
  if sloped:
    tangents = jnp.where(won, 0.0, read(c.tangent))
  else:
    tangents = jnp.zeros((gains.shape[0], 0), SLOPE_DTYPE)
  new, slope = row_step(block.astype(c.ring.dtype),
                        tangents.astype(SLOPE_DTYPE), x_farkle, bank,
                        tables.farkle_prob, options)
  ring = wave_columns.put_chunk(c.ring, new[None], (cur, at), first,
                                plan.blocks)
  tangent = (wave_columns.put_chunk(c.tangent, slope[None], (cur, at),
                                    first, plan.blocks)
             if sloped else c.tangent)
  return ring, tangent


def _wave_step(tau, m, c: _Columns, tables: WaveTables, plan: WavePlan,
               split) -> _Columns:
  """Step `tau` of segment m: its sloped chunks, its other chunks, then the
  keys that finish."""
  chunk = lambda sloped: lambda j, c: _chunk_step(tau, m, j, c, tables,
                                                  plan, sloped, split)
  c = jax.lax.fori_loop(0, tables.sloped[m], chunk(True), c)
  c = jax.lax.fori_loop(tables.sloped[m], tables.chunks[m], chunk(False), c)
  at = (tau % plan.ring_rows) * N_DICE + N_DICE - 1      # six dice, row 0
  cur, D, C = m % 2, plan.blocks, plan.chunk
  w, ws = plan.width, plan.sloped_width
  vector = _finish_group(
      c.vector, tau, lambda cols: wave_columns.ring_row(c.ring, cur, at, D)[
          wave_columns.flat_index(cols, w, C, D)],
      lambda cols: wave_columns.ring_row(c.tangent, cur, at, D)[
          wave_columns.flat_index(jnp.minimum(cols, ws - 1), ws, C, D)],
      tables, plan)
  return c._replace(vector=vector)


def _move_chunk(m, j, c: _Columns, tables: WaveTables, plan: WavePlan,
                sloped: bool, split) -> _Columns:
  """Chunk j of segment m's columns takes the rings of its keys that go
  on, from the other ring."""
  C = plan.chunk
  dst, src = m % 2, (m + 1) % 2
  carry = jax.lax.dynamic_slice_in_dim(
      tables.carry_from, tables.col_at[m] + j * C, C)
  if plan.kernel != "xla":
    move = lambda ring: wave_kernel.move_columns(
        ring, jnp.stack(wave_columns.starts(dst, src, j * C)), carry,
        interpret=plan.kernel == "interpret")
  else:
    move = functools.partial(wave_columns.carry, dst=dst, src=src,
                             first=j * C, carry=carry, size=C,
                             blocks=plan.blocks, split=split)
  if not sloped:
    return c._replace(ring=move(c.ring))
  return c._replace(ring=move(c.ring), tangent=move(c.tangent))


def _move(m, c: _Columns, tables: WaveTables, plan: WavePlan, split
          ) -> _Columns:
  """The keys that go on into segment m take their rings to their new
  columns (from the other ring, chunk by chunk: only the segment's columns
  move); every column starts at its first key."""
  chunk = lambda sloped: lambda j, c: _move_chunk(m, j, c, tables, plan,
                                                  sloped, split)
  c = jax.lax.fori_loop(0, tables.sloped[m], chunk(True), c)
  c = jax.lax.fori_loop(tables.sloped[m], tables.chunks[m], chunk(False), c)
  return c._replace(pointer=jnp.zeros_like(c.pointer))


def _segment(m, c: _Columns, tables: WaveTables, plan: WavePlan, split
             ) -> _Columns:
  """Segment m: the rings move, then its steps."""
  c = _move(m, c, tables, plan, split)
  return jax.lax.fori_loop(
      tables.bounds[m], tables.bounds[m + 1],
      lambda tau, c: _wave_step(tau, m, c, tables, plan, split), c)


def sweep(vector: jax.Array, tables: WaveTables, plan: WavePlan,
          mesh: Mesh | None = None, fresh: jax.Array | bool = False
          ) -> tuple[jax.Array, jax.Array]:
  """One wavefront sweep: every key's turn pass, `plan.span` steps.

  Args:
    vector: [V] padded W0 (donate it).
    tables: schedule and index tables; plan: sizes.
    mesh: devices over which the columns are split (XLA places the
      exchanges: each step's finishing keys read their columns' new rows,
      and the rings move between segments).
    fresh: [] bool, the vector holds initial values, not a previous
      sweep's: the penalty farkles read the nearest keys solved earlier in
      the sweep (`StateLayout.raised_key`).

  Returns:
    The new vector and the largest change of any start value (absolute or
    relative as configured).
  """
  rows, D = plan.ring_rows * N_DICE, plan.blocks
  split = wave_columns.column_split(mesh)
  blocks = wave_columns.block_split(mesh, D)
  cols = lambda width: wave_columns.shape(width, D)
  start = _Columns(vector,
                   blocks(jnp.zeros((2, rows, *cols(plan.width)),
                                    vector.dtype)),
                   blocks(jnp.zeros((2, rows, *cols(plan.sloped_width)),
                                    SLOPE_DTYPE)),
                   blocks(jnp.zeros(cols(plan.width), jnp.int32)),
                   jnp.asarray(fresh, jnp.bool_))
  out = jax.lax.fori_loop(
      0, tables.chunks.shape[0],
      lambda m, c: _segment(m, c, tables, plan, split), start)
  return out.vector, change_norm.largest(out.vector[:-1], vector[:-1],
                                         plan.relative)
