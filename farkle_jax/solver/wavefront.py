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
  live at once within it; between segments the rings of the keys that go on
  move to their new columns. The work per step follows the live keys, not
  the largest number of them.
* Only the keys whose farkle target finishes with them need slopes: they
  take a segment's first columns, and only those columns keep slopes.

One sweep costs one evaluation of every model state (plus the columns idle
within a segment) and `steps` dependent loop steps (587 for facebook at
L = -2500, against about 80,000 for the ordered method). The schedule is
`solver.wave_schedule`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from farkle_jax.game.layout import N_DICE, StateLayout, turn_row
from farkle_jax.solver import bellman
from farkle_jax.solver.wave_schedule import (
    Segment, cut_segments, finish_steps, live_keys, segment_columns)

SEGMENTS = 16         # most segments a sweep's steps are cut into
ROWS_PER_SEGMENT = 2**19  # live key-rows per sweep that pay for a segment
SLOPE_DTYPE = jnp.float32  # slopes only steer a Newton step (module doc)
INDEX_BYTES = 4       # int32 tables
TILE = 128            # columns per tile of a row's weighted sums


class WaveTables(NamedTuple):
  """Schedule and per-key index tables of the wavefront (device arrays)."""
  segments: tuple[Segment, ...]
  finish: jax.Array      # [K + 1] int32 step at which the key reaches t = 0
  t_max: jax.Array       # [K + 1] int32 highest non-terminal row of the key
  position: jax.Array    # [K + 1] int32 padded-vector position (pad: sink)
  farkle: jax.Array      # [K + 1] int32 padded position of the farkle target
  bank_base: jax.Array   # [K + 1] int32 padded bank position at t = 0
  group_keys: jax.Array  # [N, G] int32 keys finishing at each step (pad: K)
  group_cols: jax.Array  # [N, G] int32 their columns in that step's segment
  partner: jax.Array     # [N, G] int32 group index of the farkle target, -1
  farkle_prob: jax.Array  # [6]


class WavePlan(NamedTuple):
  """Static sizes of the wavefront (hashable: a jit constant)."""
  layout: StateLayout
  relative: bool   # residual |dW| / W instead of |dW|
  steps: int       # N, dependent steps of one sweep
  ring_rows: int   # rows each column keeps
  rounds: int      # pointer-doubling rounds of a finishing group
  bounds: tuple[int, ...]  # [M + 1] first step of each segment, then N
  widths: tuple[int, ...]  # [M] columns of each segment
  sloped: tuple[int, ...]  # [M] of those, the first that keep slopes
  row: bellman.RowPlan     # the distinct targets of a row


def ring_rows(roll: bellman.RollArrays) -> int:
  """Rows a column keeps: the largest gain of one roll, in units, plus one."""
  most = max(int(np.asarray(g.rows).max()) for g in roll.groups)
  return turn_row(most, roll.dice_states) + 1


def _doubling_rounds(partner: np.ndarray) -> int:
  """Rounds that take every node of the same-sum farkle graphs to the end
  of its chain or onto its cycle."""
  longest = max(1, int((partner >= 0).sum(axis=1).max()))
  return max(1, int(np.ceil(np.log2(longest))) + 1)


def _groups(finish: np.ndarray, farkle_key: np.ndarray,
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


def build(layout: StateLayout, roll: bellman.RollArrays, relative: bool,
          devices: int = 1, segments: int | None = None
          ) -> tuple[WaveTables, WavePlan]:
  """The schedule and index tables of the wavefront for one rule set.

  Args:
    layout: the state layout; roll: the roll tables.
    relative: the residual is |dW| / W instead of |dW|.
    devices: segment widths are multiples of TILE x devices (columns split
      evenly, in whole tiles).
    segments: most segments the steps are cut into.
  """
  K = layout.num_keys
  finish, start = finish_steps(layout)
  steps = int(finish.max()) + 1
  live = live_keys(start, finish)
  row = bellman.row_plan(roll)
  rows = ring_rows(roll)
  size = jnp.dtype(roll.set_weight.dtype).itemsize
  # Small games: each segment is a loop compiled of its own, which costs
  # more than the idle columns it saves.
  most = segments or min(SEGMENTS, max(1, int(live.sum()) // ROWS_PER_SEGMENT))
  move = (rows * N_DICE * (size + jnp.dtype(SLOPE_DTYPE).itemsize)
          / column_bytes(row, size)[0])
  bounds = cut_segments(live, most, 1, move)
  fields = layout.key_fields()
  sink = layout.sink
  target = layout.farkle_fields(fields)
  farkle_key = layout.key_index(*target)
  sloped = finish[farkle_key] == finish
  segs, widths, sloped_widths, finish_col = segment_columns(
      start, finish, sloped, bounds, TILE * devices, K)
  group_keys, group_cols, partner = _groups(finish, farkle_key, finish_col)

  def padded(values, pad):
    return np.append(np.asarray(values, np.int64), pad)

  as_int = lambda x: jnp.asarray(x, jnp.int32)
  tables = WaveTables(
      segments=tuple(Segment(*map(as_int, s)) for s in segs),
      finish=as_int(padded(finish, -1)),
      t_max=as_int(padded(layout.t_max(fields[0]), -1)),
      position=as_int(padded(layout.padded_index(*fields), sink)),
      farkle=as_int(padded(layout.padded_index(*target), sink)),
      bank_base=as_int(padded(layout.bank_base(fields), sink)),
      group_keys=as_int(group_keys), group_cols=as_int(group_cols),
      partner=as_int(partner), farkle_prob=roll.farkle_prob)
  plan = WavePlan(layout, relative, steps, rows, _doubling_rounds(partner),
                  tuple(bounds), tuple(widths), tuple(sloped_widths), row)
  return tables, plan


def _best(read, sets):
  """Each score set's best value among its options, and the slope of the
  first best one; per option count, concatenated.

  Args:
    read: targets [R_j] int -> ([R_j, W] values, [R_j, Ws] slopes) of those
      distinct targets of the row; slopes of the first Ws columns only.
    sets: per option count, the options of each score set (`RowPlan`).
  """
  best, slope = [], []
  for group in sets:
    idx = np.asarray(group)                               # [R_j, j]
    top = read(idx[:, 0])[0]
    for i in range(1, idx.shape[1]):
      top = jnp.maximum(top, read(idx[:, i])[0])
    # The slope in a pass of its own, from the last option to the first
    # equal to the best: one chain of maxima fuses, a chain that also
    # selects slopes on the way does not (3x slower on a CPU).
    tan = None
    for i in range(idx.shape[1] - 1, -1, -1):
      value, tangent = read(idx[:, i])
      same = value[:, :tangent.shape[1]] == top[:, :tangent.shape[1]]
      tan = tangent if tan is None else jnp.where(same, tangent, tan)
    best.append(top)
    slope.append(tan)
  return jnp.concatenate(best), jnp.concatenate(slope)


def _tiled_product(weight: np.ndarray, x: jax.Array, dtype) -> jax.Array:
  """weight [6, R] @ x [R, W] as products of fixed-size column tiles: one
  dense product fuses better on a CPU than six sums, and tiles of one size
  sum in one order whatever the width, so a run split over devices is the
  run on one, bit for bit."""
  R, W = x.shape
  if not W:
    return jnp.zeros((weight.shape[0], 0), dtype)
  tiles = x.reshape(R, W // TILE, TILE).transpose(1, 0, 2)  # [W/T, R, T]
  w = jnp.broadcast_to(jnp.asarray(weight, dtype), (W // TILE,) + weight.shape)
  out = jax.lax.dot_general(w, tiles, (((2,), (1,)), ((0,), (0,))),
                            precision=jax.lax.Precision.HIGHEST)
  return out.transpose(1, 0, 2).reshape(weight.shape[0], W)


def row_step(read, x_farkle, bank, farkle_prob, row: bellman.RowPlan):
  """New values [6, W] and slopes [6, Ws] of one row of W columns.

  Args:
    read: targets [R] int -> ([R, W] values, [R, Ws] slopes) of those
      distinct targets of the row (wins: value 1, slope 0); slopes of the
      first Ws columns only.
    x_farkle: [W] value of a farkle; bank: [W] value of banking (-inf
      where not allowed); farkle_prob: [6].
    row: the row's targets and score sets.
  """
  best, tan, weight = [], [], []
  for n in range(N_DICE):
    b, s = _best(read, row.sets[n])                      # [R_n, W]
    best.append(b)
    tan.append(s)
    w = np.zeros((N_DICE, b.shape[0]))
    w[n] = row.weights[n]
    weight.append(w)
  weight = np.concatenate(weight, axis=1)                 # [6, R]
  values = _tiled_product(weight, jnp.concatenate(best), x_farkle.dtype)
  tangents = _tiled_product(weight, jnp.concatenate(tan), tan[0].dtype)
  value = (values + farkle_prob[:, None].astype(x_farkle.dtype)
           * x_farkle[None])
  slope = tangents + farkle_prob[:, None].astype(tangents.dtype)
  ws = slope.shape[1]
  banks = bank[None, :ws] >= value[:, :ws]   # banking wins ties
  return jnp.maximum(value, bank[None]), jnp.where(banks, 0, slope)


def _finish_group(vector, step, new, slope, tables: WaveTables,
                  plan: WavePlan):
  """Solves and writes the start values of the keys finishing at `step`
  (new [W], slope [Ws]: the six-dice row-0 values of the segment's columns
  and the slopes of its first columns, those of the keys whose farkle
  target finishes with them)."""
  keys = tables.group_keys[step]                         # [G]
  cols = tables.group_cols[step]
  value = new[cols]
  if slope.shape[0]:   # keys past the sloped columns have no partner
    s = slope[jnp.minimum(cols, slope.shape[0] - 1)].astype(value.dtype)
  else:
    s = jnp.zeros_like(value)
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
  return vector.at[position].set(x)


class _Columns(NamedTuple):
  """Loop state of a segment."""
  vector: jax.Array   # [V] padded W0
  ring: jax.Array     # [R * 6, W] values written at the last R steps
  tangent: jax.Array  # [R * 6, Ws] slopes of the first Ws columns
  pointer: jax.Array  # [W] int32 the current key's place in its column


def _segment_step(tau, c: _Columns, seg: Segment, tables: WaveTables,
                  plan: WavePlan, split) -> _Columns:
  """Step `tau`: one row of every column of a segment."""
  layout, rows, row = plan.layout, plan.ring_rows, plan.row
  cols = jnp.arange(seg.col_keys.shape[0])
  ring, tangent, pointer = split(c.ring), split(c.tangent), split(c.pointer)
  key = seg.col_keys[cols, pointer]
  pointer = jnp.minimum(pointer + (tables.finish[key] < tau),
                        seg.col_keys.shape[1] - 1)
  key = seg.col_keys[cols, pointer]
  t = tables.finish[key] - tau              # < 0 or > t_max: idle column
  margin = tables.t_max[key] - t            # gains past it win
  x_farkle = 1 - c.vector[tables.farkle[key]]
  base = tables.bank_base[key]
  t_bank = jnp.clip(t, 0, layout.num_rows)
  bank = jnp.where(t >= layout.bank_floor_at(base, jnp),
                   1 - c.vector[layout.bank_position(base, t_bank, jnp)],
                   -jnp.inf)
  gains = np.asarray(row.gains)
  source = ((tau - gains) % rows) * N_DICE + np.asarray(row.dice)   # [D]

  ws = tangent.shape[1]   # the first columns: keys that need slopes

  def read(targets):
    # Straight from the ring, fused with the running maximum: the rows of
    # one step's distinct targets stay in cache while the options read them.
    won = gains[targets][:, None] > margin[None]
    return (jnp.where(won, 1.0, ring[source[targets]]).astype(ring.dtype),
            jnp.where(won[:, :ws], 0.0, tangent[source[targets]]).astype(
                tangent.dtype))

  new, slope = row_step(read, x_farkle, bank, tables.farkle_prob, row)
  at = (tau % rows) * N_DICE
  ring = jax.lax.dynamic_update_slice_in_dim(ring, new, at, 0)
  tangent = jax.lax.dynamic_update_slice_in_dim(tangent, slope, at, 0)
  vector = _finish_group(c.vector, tau, new[N_DICE - 1],
                         slope[N_DICE - 1], tables, plan)
  return _Columns(vector, ring, tangent, pointer)


def sweep(vector: jax.Array, tables: WaveTables, plan: WavePlan,
          mesh: Mesh | None = None) -> tuple[jax.Array, jax.Array]:
  """One wavefront sweep: every key's turn pass, `plan.steps` steps.

  Args:
    vector: [V] padded W0 (donate it).
    tables: schedule and index tables; plan: sizes.
    mesh: devices over which the columns are split (XLA places the
      exchanges: each step's finishing keys read their columns' new rows,
      and the rings move between segments).

  Returns:
    The new vector and the largest change of any start value (absolute or
    relative as configured).
  """
  rows = plan.ring_rows * N_DICE

  def split(x):
    if mesh is None or mesh.size == 1:
      return x
    return jax.lax.with_sharding_constraint(
        x, NamedSharding(mesh, P(*(None,) * (x.ndim - 1), "batch")))

  old = vector
  ring = jnp.zeros((rows, 0), vector.dtype)
  tangent = jnp.zeros((rows, 0), SLOPE_DTYPE)
  for m, seg in enumerate(tables.segments):
    a, b = plan.bounds[m], plan.bounds[m + 1]
    ws = plan.sloped[m]
    if m:   # the keys that go on take their rings to their new columns
      ring = ring[:, seg.carry_from]
      tangent = (tangent[:, seg.carry_from[:ws]] if tangent.shape[1]
                 else jnp.zeros((rows, ws), SLOPE_DTYPE))
    else:
      ring = jnp.zeros((rows, plan.widths[0]), vector.dtype)
      tangent = jnp.zeros((rows, ws), SLOPE_DTYPE)
    start = _Columns(vector, split(ring), split(tangent),
                     split(jnp.zeros((plan.widths[m],), jnp.int32)))
    vector, ring, tangent, _ = jax.lax.fori_loop(
        a, b, lambda tau, c, seg=seg: _segment_step(tau, c, seg, tables,
                                                    plan, split), start)
  delta = jnp.abs(vector - old)[:-1]
  if plan.relative:
    delta = delta / jnp.maximum(vector[:-1], jnp.finfo(vector.dtype).tiny)
  return vector, delta.max()


class SweepBytes(NamedTuple):
  """Bytes one sweep moves, counted from the plan (docs/model.md §4.3)."""
  gathered: int   # reads by gathers: ring blocks, start values, key tables
  written: int    # ring rows, start values, moved rings
  column_steps: int  # columns evaluated, idle ones included
  live_rows: int  # key-rows that are live (the model's states / 6)


def column_bytes(row: bellman.RowPlan, size: int, sloped: bool = True
                 ) -> tuple[int, int]:
  """(gathered, written) bytes of one column at one step: a ring row per
  distinct target for values (and slopes, for a column of keys that need
  them), two start values (farkle, bank) and six int32 table entries
  read; six values (and slopes) written."""
  slope = jnp.dtype(SLOPE_DTYPE).itemsize if sloped else 0
  return (row.num_targets * (size + slope) + 2 * size + 6 * INDEX_BYTES,
          N_DICE * (size + slope))


def sweep_bytes(plan: WavePlan, dtype) -> SweepBytes:
  """What one sweep reads and writes, from its schedule: `column_bytes`
  for every column at every step of its segment; per segment boundary, the
  rings of its columns moved; per finishing key, its solve."""
  size, slope = jnp.dtype(dtype).itemsize, jnp.dtype(SLOPE_DTYPE).itemsize
  lengths = np.diff(plan.bounds)
  column_steps = int(np.dot(lengths, plan.widths))
  sloped_steps = int(np.dot(lengths, plan.sloped))
  read, write = column_bytes(plan.row, size, False)
  extra_read, extra_write = (a - b for a, b in zip(
      column_bytes(plan.row, size), (read, write)))
  ring = plan.ring_rows * N_DICE
  moved = sum(ring * (w * size + ws * slope)
              for w, ws in zip(plan.widths[1:], plan.sloped[1:]))
  keys = plan.layout.num_keys
  finishing = keys * (3 * size + slope + 5 * INDEX_BYTES)
  rows = plan.layout.num_states // N_DICE
  return SweepBytes(
      int(column_steps * read + sloped_steps * extra_read + moved
          + finishing),
      int(column_steps * write + sloped_steps * extra_write + moved
          + keys * size), column_steps, rows)


def step_bytes(tables: WaveTables, plan: WavePlan, dtype) -> list[float]:
  """XLA's bytes accessed by one step of each segment (its compiled loop
  body, on one device)."""
  out = []
  rows = plan.ring_rows * N_DICE
  vector = jnp.zeros((plan.layout.padded_size,), dtype)
  for m, seg in enumerate(tables.segments):
    w = plan.widths[m]
    columns = _Columns(vector, jnp.zeros((rows, w), dtype),
                       jnp.zeros((rows, plan.sloped[m]), SLOPE_DTYPE),
                       jnp.zeros((w,), jnp.int32))
    step = jax.jit(lambda tau, c, tables, seg: _segment_step(
        tau, c, seg, tables, plan, lambda x: x))
    cost = step.lower(jnp.asarray(plan.bounds[m], jnp.int32), columns,
                      tables, seg).compile().cost_analysis()
    out.append(float(cost["bytes accessed"]))
  return out
