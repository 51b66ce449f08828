"""The wavefront for N players (docs/model.md §8, "The wavefront for N
players").

The two-player wavefront (`solver.wavefront`) with value vectors: keys run
in columns on the schedule of `seat_wave_schedule` (the sum of all N
scores), each column keeps its key's last `ring_rows` turn rows in a ring,
now of C = N channels a dice state (the N - 1 first seats' chances and
the farkle slope, as `vector_pass`), flattened into the ring's rows so
that the two-player method's moves and key pointers serve unchanged. A
row reads each distinct target once, takes each score set's first option
best on channel 0 (the mover's chance), weighs the sets, adds the
farkle's share (the next player's start vector as the last sweep left
it) and banks where banking is worth as much to the mover.

When a score sum finishes, its keys are solved together: a farkle leads
to the next player's key, the scores rotated (the same sum), so key k's
vector is V_k = c_k + a_k R(V_{p(k)}), a_k the chance its turn ends in a
farkle, R the view of the next player's vector from the mover. N farkles
lead back to the key itself with the vector seen as before, so composing
the map N times gives V_k = A_k + M_k V_k, solved exactly. Under a
penalty a farkle also raises the mover's count, so the keys of a group
form chains instead, each ending where a penalty lowers a score: a lower
sum, finishing later, read at its value of the last sweep (as the
two-player method reads it; no Newton step here, so those values travel
a sweep at a time); the chains are solved by pointer doubling. Sweeps
repeat while they change.

Rules it runs: any number of players, six dice alike for everyone (an
entry minimum and a final round included: the bank's floor and what a
bank at the goal reads are the stage engine's, `vector_pass.bank_values`);
others are refused in one line (`unsupported`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (bellman, change_norm, last_turns, placement,
                               seat_wave_kernel, seat_wave_schedule,
                               vector_pass, wave_columns, wave_schedule,
                               wavefront)
from farkle_jax.solver.wave_row import TILE, option_table, tiled_product


class SeatWaveTables(NamedTuple):
  """Schedule and per-key tables (device arrays); the field names the
  two-player helpers read (`wavefront._chunk_keys`, `_move`) as there."""
  col_keys: jax.Array    # [sum W_m L_m + C L] int32 keys of the columns
  carry_from: jax.Array  # [sum W_m + W] int32 column before of a key
  bounds: jax.Array      # [M + 1] int32 first step of each segment
  key_at: jax.Array      # [M] int32 where a segment's col_keys start
  depth: jax.Array       # [M] int32 keys a column runs in the segment
  col_at: jax.Array      # [M] int32 where a segment's carry_from starts
  chunks: jax.Array      # [M] int32 W_m / C
  sloped: jax.Array      # [M] int32 zeros (the slopes ride in the ring)
  finish: jax.Array      # [K + 1] int32 step the key reaches t = 0
  t_max: jax.Array       # [K + 1] int32 highest non-terminal row
  s0: jax.Array          # [K + 1] int32 the mover's score index
  bank_base: jax.Array   # [K + 1] int32 `SeatsLayout.bank_base`
  farkle: jax.Array      # [K + 1] int32 the next player's key after a
                         #   farkle (the scores rotated)
  stale: jax.Array       # [K + 1] bool that key finishes later (a
                         #   penalty): a run's first sweep reads a guess
  solved: jax.Array      # [span] int32 the lowest score sum finished
                         #   before each step (-1: none yet)
  group_keys: jax.Array  # [span, G] int32 keys finishing at each step
  group_cols: jax.Array  # [span, G] int32 their columns
  partner: jax.Array     # [span, G] int32 group index of each one's
                         #   farkle target (-1: another group, or a pad)
  farkle_prob: jax.Array  # [6]
  final: jax.Array       # a bank at or past the goal under the final round
                         #   (`multiplayer.SeatTables.final`)


class SeatWavePlan(NamedTuple):
  """Static sizes (hashable: a jit constant)."""
  seats: SeatsLayout
  relative: bool   # the change is |dV| / V instead of |dV|
  span: int        # wave steps of a sweep
  ring_rows: int   # turn rows a column keeps
  chunk: int       # C, columns a loop iteration evaluates
  depth: int       # the most keys a column runs in a segment
  widths: tuple[int, ...]  # [M] columns of each segment
  steps: int       # dependent loop steps of a sweep (chunks and moves)
  chains: bool     # farkles may leave a finishing group (a penalty)
  rounds: int      # pointer-doubling rounds of a group's chains
  row: bellman.RowPlan     # the distinct targets of a row
  kernel: str = "xla"      # a chunk's row and the moves: "xla",
                           #   "pallas" (the fused kernels), "interpret"
                           #   (them, interpreted)
  blocks: int = 1          # D, the devices the columns split over: the
                           #   rings' column blocks (`wave_columns`)

  @property
  def width(self) -> int:
    return max(self.widths)


def unsupported(seats: SeatsLayout) -> str | None:
  """Why the N-player wavefront cannot run these rules (None: it can)."""
  rules = seats.rules
  if rules.hands or not rules.dice_alike:
    return "dice that differ (rules.dice or rules.hands)"
  return None


def _key_tables(seats: SeatsLayout) -> dict[str, np.ndarray]:
  """Per-key schedule and transitions (NumPy, K entries)."""
  fields = seats.key_fields()
  s0 = np.asarray(fields[0], np.int64)
  sums = sum(np.asarray(s, np.int64) for s in seats.scores_of(fields))
  finish = seat_wave_schedule.finish_of_sums(seats, sums)
  t_max = np.asarray(seats.t_max(s0), np.int64)
  start = finish - t_max
  farkle = seats.key_index(seats.farkle_fields(fields))
  return dict(finish=finish - start.min(), start=start - start.min(),
              t_max=t_max, s0=s0, bank_base=seats.bank_base(fields),
              farkle=farkle, sums=sums)


def build(seats: SeatsLayout, roll: bellman.RollArrays, relative: bool,
          devices: int = 1) -> tuple[SeatWaveTables, SeatWavePlan]:
  """The schedule and tables of the N-player wavefront for `seats`, its
  chunks multiples of TILE x `devices` columns (split evenly over them,
  in whole tiles, as two players)."""
  why = unsupported(seats)
  if why:
    raise ValueError(f"the wavefront for {seats.players} players does not "
                     f"run {why}")
  K, k = seats.num_keys, _key_tables(seats)
  live = wave_schedule.live_keys(k["start"], k["finish"])
  chunk = wave_schedule.chunk_columns(live, TILE * devices)
  bounds = wave_schedule.cut_segments(
      live, seat_wave_schedule.SEGMENTS, chunk,
      seat_wave_schedule.move_cost(seat_wave_schedule.column_bytes(
          seats, roll)))
  every = np.ones(K, bool)
  segs, widths, _, finish_col = wave_schedule.segment_columns(
      k["start"], k["finish"], every, bounds, chunk, K, TILE * devices)
  group_keys, group_cols, partner = wave_schedule.finishing_groups(
      k["finish"], k["farkle"], finish_col)
  if (k["finish"][k["farkle"]] < k["finish"]).any():
    raise AssertionError("a farkle target finishes at an earlier step")
  int32 = lambda x: placement.on_device(x, np.int32)
  pad = lambda name, value: int32(np.append(k[name], value))
  segment = wavefront.segment_tables(segs, bounds, widths, [0] * len(widths),
                                     chunk, K)
  tables = SeatWaveTables(
      **segment, finish=pad("finish", -1), t_max=pad("t_max", -1),
      s0=pad("s0", 0), bank_base=pad("bank_base", K), farkle=pad("farkle", K),
      stale=placement.on_device(np.append(
          k["finish"][k["farkle"]] > k["finish"], False)),
      solved=int32(wave_schedule.solved_sums(
          k["finish"], k["sums"], int(k["finish"].max()) + 1)),
      group_keys=int32(group_keys), group_cols=int32(group_cols),
      partner=int32(partner), farkle_prob=roll.farkle_prob,
      final=placement.on_device(last_turns.final_values(
          seats, roll if seats.past_goal else None)))
  depth = max(s.col_keys.shape[1] for s in segs)
  steps = int(np.dot(np.diff(bounds) + 1, np.asarray(widths) // chunk))
  return tables, SeatWavePlan(
      seats, relative, int(k["finish"].max()) + 1, wavefront.ring_rows(roll),
      chunk, depth, tuple(widths), steps, bool(seats.penalty),
      wave_schedule.doubling_rounds(partner), bellman.row_plan(roll),
      blocks=devices)


def _columns_of(w0: jax.Array, plan: SeatWavePlan, fresh, split
                ) -> wavefront._Columns:
  """The loop state of a sweep: the two-player one, its ring [2, R * 6 *
  C, W] (row (r * 6 + n) * C + c: ring row r, dice state n, channel c),
  no separate slopes."""
  rows = plan.ring_rows * 6 * vector_pass.channels(plan.seats.players)
  cols = wave_columns.shape(plan.width, plan.blocks)
  return wavefront._Columns(
      w0, split(jnp.zeros((2, rows, *cols), w0.dtype)),
      jnp.zeros((2, 1, 1), wavefront.SLOPE_DTYPE),
      split(jnp.zeros(cols, jnp.int32)), jnp.asarray(fresh, jnp.bool_))


def _chunk_step(tau, m, j, c: wavefront._Columns, tables: SeatWaveTables,
                plan: SeatWavePlan, split) -> wavefront._Columns:
  """Row `tau` of chunk j of segment m: six new rows of C channels, by
  XLA's step or the fused kernel (`plan.kernel`: `seat_wave_kernel`);
  `split` places a column array over the devices (`sweep`)."""
  C = vector_pass.channels(plan.seats.players)
  first = j * plan.chunk
  keys = wavefront._chunk_keys(tau, m, j, c, tables, plan, split)
  farkle, bank = map(split, _reads(keys, c.vector, tau, c.fresh, tables,
                                   plan))
  gains, dice = np.asarray(plan.row.gains), np.asarray(plan.row.dice)
  source = ((tau - gains) % plan.ring_rows) * 6 + dice          # [D]
  at = wave_columns.starts(m % 2, (tau % plan.ring_rows) * 6 * C, first)
  if plan.kernel != "xla":
    options = option_table(plan.row)
    dtype = c.ring.dtype
    ring = seat_wave_kernel.chunk_row(
        c.ring, jnp.stack(at), source.astype(jnp.int32)[options.index],
        jnp.asarray(gains[options.index], jnp.int32),
        jnp.asarray(options.weight, dtype),
        tables.farkle_prob.astype(dtype), keys.margin.astype(jnp.int32),
        farkle, bank, (keys.t >= 0) & (keys.margin >= 0),
        spans=options.spans, interpret=plan.kernel == "interpret")
  else:
    rows = source[:, None] * C + jnp.arange(C)[None]           # [D, C]
    block = split(_chunk_block(c.ring, m % 2, first, rows, plan))
    won = (gains[:, None] > keys.margin[None])[:, None]        # [D, 1, W]
    win = vector_pass.win_vector(plan.seats.players, block.dtype)
    block = jnp.where(won, win[None, :, None], block)
    new = split(_row_values(block, farkle, bank, tables, plan))  # [6, C, W]
    ring = wave_columns.put_chunk(c.ring, new.reshape(1, 6 * C, plan.chunk),
                                  at[:2], first, plan.blocks)
  return c._replace(ring=ring, pointer=wave_columns.put_chunk(
      c.pointer, keys.pointer, (), first, plan.blocks))


def _chunk_block(ring, cur, first, rows, plan: SeatWavePlan) -> jax.Array:
  """[D, C, W] ring rows `rows` [D, C] of ring `cur` over a chunk's W
  columns (a slice of each device's block over several)."""
  if plan.blocks == 1:   # ring[cur] first: XLA charges a gather from
    # both rings 4,117 GB a tiny three-player sweep (CPU), this 3,217
    cols = first + jnp.arange(plan.chunk)
    return ring[cur][rows[:, :, None], cols[None, None]]
  return wave_columns.chunk_rows(ring, cur, first, rows.reshape(-1),
                                 plan.chunk, plan.blocks).reshape(
                                     rows.shape + (plan.chunk,))


def _reads(keys, w0, tau, fresh, tables: SeatWaveTables,
           plan: SeatWavePlan) -> tuple[jax.Array, jax.Array]:
  """[C, W] what a farkle and what banking are worth to each column's key
  (banking's channel 0: -inf where its turn total may not bank)."""
  seats = plan.seats
  target = tables.farkle[keys.key]
  # A run's first sweep reads a penalty farkle's target, which holds only
  # the first guess, at the nearest key solved already (as two players).
  total = tables.solved[tau]
  guessed = fresh & tables.stale[keys.key] & (total >= 0)
  target = jnp.where(guessed, seats.raised_to(target, total, jnp), target)
  farkle = vector_pass.farkle_values(w0, target, seats)
  s0 = tables.s0[keys.key]
  t = jnp.maximum(keys.t, 0)
  batch = vector_pass.Batch(None, tables.bank_base[keys.key], s0, None,
                            tables.final if seats.past_goal else None)
  bank = vector_pass.bank_values(w0, batch, t, seats)
  may = t >= seats.bank_floor(s0, jnp)
  return farkle, bank.at[0].set(jnp.where(may, bank[0], -jnp.inf))


def _row_values(block, farkle, bank, tables: SeatWaveTables,
                plan: SeatWavePlan) -> jax.Array:
  """[6, C, W] a row's values from its targets `block` [D, C, W]: each
  score set's first option best on channel 0, weighed, the farkle's share
  added (`_reads`); banking where it is worth as much to the mover."""
  options = option_table(plan.row)
  reads = block[options.index]                                 # [S, J, C, W]
  pick = jnp.argmax(reads[:, :, 0], axis=1)                    # [S, W]
  best = jnp.take_along_axis(reads, pick[:, None, None], axis=1)[:, 0]
  value = tiled_product(options.weight, best, block.dtype)     # [6, C, W]
  value = value + tables.farkle_prob[:, None, None].astype(block.dtype) \
      * farkle[None]
  take = bank[0][None] >= value[:, 0]
  return jnp.where(take[:, None], bank[None], value)


def _finish_group(c: wavefront._Columns, tau, m, tables: SeatWaveTables,
                  plan: SeatWavePlan) -> jax.Array:
  """The start vectors of the keys finishing at `tau`, solved with their
  farkle targets (module docstring), written into `c.vector`."""
  seats, N = plan.seats, plan.seats.players
  C = vector_pass.channels(N)
  keys, cols = tables.group_keys[tau], tables.group_cols[tau]
  partner = tables.partner[tau]
  at = (tau % plan.ring_rows) * 6 * C + 5 * C    # six dice, row 0
  row = wave_columns.ring_rows(c.ring, m % 2, at, C, plan.blocks)  # [C, W]
  v = row[:, wave_columns.flat_index(cols, plan.width, plan.chunk,
                                     plan.blocks)]              # [C, G]
  inside = partner >= 0              # the farkle target finishes now too
  slope = jnp.where(inside, v[C - 1], 0)                       # [G]
  full = vector_pass.seat_vector(v, N)[:N]                     # [N, G]
  seen = seats.from_next(c.vector[tables.farkle[keys]].T, jnp)  # [N, G]
  # Inside: the affine map of the target's vector; else the value as read.
  base = jnp.where(inside[None], full - slope[None] * seen, full)
  at_key = jnp.where(inside, partner, jnp.arange(partner.shape[0]))
  solve = _chains if plan.chains else _cycles
  solved = vector_pass.sum_closed(solve(base, slope, at_key, N, plan))
  return c.vector.at[keys].set(solved.T)


def _cycles(base, slope, at_key, N: int, plan: SeatWavePlan) -> jax.Array:
  """[N, G] V = base + slope R(V[at_key]) where every farkle stays in the
  group (no penalty): N farkles lead back to the key, seen as before, so
  N compositions give V = A + M V."""
  del plan
  total, weight, step = base, slope, at_key
  for r in range(1, N):
    turned = jnp.roll(base[:, step], r, axis=0)
    total, weight = total + weight[None] * turned, weight * slope[step]
    step = at_key[step]
  return total / (1 - weight[None])


def _chains(base, slope, at_key, N: int, plan: SeatWavePlan) -> jax.Array:
  """[N, G] the same map where farkles leave the group (under a penalty:
  each farkle raises the mover's count until a penalty lowers a score,
  to a later group read at its last value): every chain ends at a key
  whose value is known (slope 0, its own target). Pointer doubling, each
  node carrying how many rotations its path has taken."""
  total, weight, step = base, slope, at_key
  turns = (slope != 0).astype(jnp.int32)
  seat = jnp.arange(N)[:, None]
  for _ in range(plan.rounds):
    turned = jnp.take_along_axis(total[:, step], (seat - turns[None]) % N,
                                 axis=0)
    total = total + weight[None] * turned
    weight, turns = weight * weight[step], (turns + turns[step]) % N
    step = step[step]
  return total


def _wave_step(tau, m, c, tables: SeatWaveTables, plan: SeatWavePlan,
               split):
  c = jax.lax.fori_loop(
      0, tables.chunks[m],
      lambda j, c: _chunk_step(tau, m, j, c, tables, plan, split), c)
  return c._replace(vector=_finish_group(c, tau, m, tables, plan))


def _segment(m, c, tables: SeatWaveTables, plan: SeatWavePlan, split):
  """Segment m: the rings of the keys that go on move to their columns
  (the two-player moves, the slopes riding in the ring), then its steps."""
  c = jax.lax.fori_loop(0, tables.chunks[m], lambda j, c: (
      wavefront._move_chunk(m, j, c, tables, plan, False, split)), c)
  c = c._replace(pointer=jnp.zeros_like(c.pointer))
  return jax.lax.fori_loop(
      tables.bounds[m], tables.bounds[m + 1],
      lambda tau, c: _wave_step(tau, m, c, tables, plan, split), c)


def sweep(w0: jax.Array, tables: SeatWaveTables, plan: SeatWavePlan,
          fresh: jax.Array | bool = False, mesh: Mesh | None = None
          ) -> tuple[jax.Array, jax.Array]:
  """One sweep: every key's turn, `plan.span` wave steps.

  Args:
    w0: [K + 1, N] start vectors (row K: the sink).
    fresh: [] bool, w0 holds the first guesses, not a sweep's values: a
      penalty farkle reads the nearest key solved earlier in the sweep.
    mesh: devices over which the columns are split, as two players'
      (`wavefront.sweep`; the plan built for as many: `build`).

  Returns:
    The new start vectors and the largest change of any seat's value
    (`change_norm`, relative with `plan.relative`).
  """
  split = wave_columns.column_split(mesh)
  out = jax.lax.fori_loop(0, tables.chunks.shape[0],
                          lambda m, c: _segment(m, c, tables, plan, split),
                          _columns_of(w0, plan, fresh,
                                      wave_columns.block_split(
                                          mesh, plan.blocks)))
  new = out.vector
  return new, change_norm.largest(new[:-1], w0[:-1], plan.relative)
