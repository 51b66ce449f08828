"""The Newton correction of an N-player sweep under a penalty
(docs/model.md §8).

A sweep a block at a time (`penalty_blocks`) reads one kind of value
before the sweep has produced it: a penalty farkle whose target lies in a
later block (a lower score sum) reads that key's previous value. Every
bank reads a block solved earlier in the sweep, and a farkle into the
key's own block is solved with the block. So with every turn's policy
fixed, the sweep's output y is affine in those stale reads, and the fixed
point x* = y + delta solves

    delta_k = R( sum_t bank_k[t] delta[bank target t]
                 + a_k (delta[farkle target] + stale_k (y - read)[target]) )

with bank_k[t] and a_k how key k's turn ends under the policy its pass
chose (`vector_pass.turn_exits`), `read` what the sweep's farkle read saw
and R the rotation to the mover's seats. This is the two-player Newton
step (`newton`, docs/model.md §4.2) with vectors: one policy-iteration
step on the stale reads, exact when the policies are, so the sweeps that
remain converge quadratically instead of shrinking the error by a constant
factor each.

The system is solved by Jacobi passes over every key at once, in key
order: the banks of all turns are T + 1 shifted products of whole arrays
(banking t raises one score index by t), where passes in the sweep's
stage order read each bank by a gather. A Jacobi pass carries each
correction one turn further where a pass in sweep order carried it up
every chain of banks, so it takes about three times the passes (the error
falls about 0.66x a pass), at a tenth of the cost each (BENCHMARKS.md).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from farkle_jax.solver import vector_pass
from farkle_jax.solver.multiplayer import SeatPlan, SeatTables

EXIT_DTYPE = jnp.float32   # bank exits: a Newton step tolerates their 1e-7
                           # relative error (the next sweep measures it)
INNER_PASSES = 100         # most Jacobi passes of one correction
INNER_SHRINK = 1e-6        # passes stop once they change delta by less than
                           # this fraction of the largest stale error ...
NEAR = 1e-2                # ... or, stale errors below this, by less than
                           # the caller's `floor`: near the fixed point the
                           # policies may have settled, and a step exact to
                           # the tolerance lets the next sweep be the last
STALL = 0.95               # passes that shrink the change less stop


class SeatExits(NamedTuple):
  """How every key's turn ended in the last sweep (stage-major, as the
  tables)."""
  bank: jax.Array   # [S, T + 1, M] EXIT_DTYPE probability of banking t
  slope: jax.Array  # [S, M] probability of a farkle
  read: jax.Array   # [S, N, M] the farkle read the sweep saw, seen from
                    #   the mover


def empty(tables: SeatTables, plan: SeatPlan) -> SeatExits:
  """Zero exits for the tables' stages, placed as a sweep leaves them
  (`shardings`: the sweep's program then takes its first exits as its
  later ones, one compilation)."""
  S, M = tables.keys.shape
  n, rows = plan.seats.players, plan.seats.num_rows + 1
  zeros = SeatExits(jnp.zeros((S, rows, M), EXIT_DTYPE),
                    jnp.zeros((S, M), jnp.float64),
                    jnp.zeros((S, n, M), jnp.float64))
  if plan.mesh is None:
    return zeros
  return jax.tree.map(jax.device_put, zeros, shardings(plan.mesh))


def shardings(mesh: Mesh) -> SeatExits:
  """Where the exits live on `mesh`: split along their keys, as the
  tables' sub-batches (`multiplayer.table_shardings`); on one device
  whole, as a program's outputs come out there whatever their spec."""
  if mesh.size == 1:
    return SeatExits(*(NamedSharding(mesh, P()),) * 3)
  return SeatExits(NamedSharding(mesh, P(None, None, "batch")),
                   NamedSharding(mesh, P(None, "batch")),
                   NamedSharding(mesh, P(None, None, "batch")))


def footprint(seats, stages: int, width: int) -> int:
  """Bytes of the exits and the correction's work arrays for `stages`
  stages of `width` keys (`SeatTables.keys` [S, M])."""
  n, rows = seats.players, seats.num_rows + 1
  keys = stages * width
  exits = keys * (rows * 4 + 8 + n * 8)
  # `_System` in key order (its bank exits gathered, then transposed),
  # and the passes' arrays of every key.
  K = seats.num_keys + 1
  work = (keys * n * 8 + K * (rows * 4 * 2 + 8 + 4 + n * 8)
          + K * n * 8 * 4)
  return exits + work


def record_bank(exits: SeatExits, s: jax.Array, bank: jax.Array
                ) -> SeatExits:
  """`exits` with stage s's bank exits [T + 1, M]."""
  return exits._replace(bank=jax.lax.dynamic_update_index_in_dim(
      exits.bank, bank.astype(exits.bank.dtype), s, axis=0))


def record_reads(exits: SeatExits, first: jax.Array, slope: jax.Array,
                 read: jax.Array) -> SeatExits:
  """`exits` with the farkle slopes [P * M] and reads [N, P * M] of the P
  stages from stage `first` on (a block, as `penalty_blocks` keeps them)."""
  P = slope.shape[0] // exits.slope.shape[1]
  read = read.reshape(read.shape[0], P, -1).transpose(1, 0, 2)  # [P, N, M]
  put = lambda a, x: jax.lax.dynamic_update_slice_in_dim(a, x, first, 0)
  return exits._replace(slope=put(exits.slope, slope.reshape(P, -1)),
                        read=put(exits.read, read))


def stale_errors(w0: jax.Array, exits: SeatExits, tables: SeatTables,
                 plan: SeatPlan) -> jax.Array:
  """[S, N, M] a_k (R(y[target]) - read_k) where key k's farkle read a
  later block, else 0."""
  got = plan.seats.from_next(jnp.moveaxis(w0[tables.farkle], -1, 1), jnp,
                             axis=1)                              # [S, N, M]
  stale = (tables.real & (tables.chain < 0))[:, None]
  return jnp.where(stale, exits.slope[:, None] * (got - exits.read), 0)


class _Pass(NamedTuple):
  delta: jax.Array   # [K, N] the correction so far
  passes: jax.Array  # [] int32 passes done
  change: jax.Array  # [] largest change of delta in the last pass
  before: jax.Array  # [] the same of the pass before


class _System(NamedTuple):
  """The correction's linear system in key order (`SeatsLayout.key_shape`),
  where the banks of every turn are shifts along one score axis."""
  bank: jax.Array    # [T + 1, B, .., B, F, .., F] EXIT_DTYPE bank exits
  slope: jax.Array   # [K, 1] probability of a farkle
  farkle: jax.Array  # [K] int32 flat key of the farkle target
  stale: jax.Array   # [K, N] `stale_errors`

  @classmethod
  def of(cls, w0: jax.Array, exits: SeatExits, tables: SeatTables,
         plan: SeatPlan) -> "_System":
    seats = plan.seats
    K, M = seats.num_keys, tables.keys.shape[1]
    # Where each key lies among the stages' slots (padding: the sink).
    slot = jnp.zeros(K + 1, jnp.int32).at[tables.keys.reshape(-1)].set(
        jnp.arange(tables.keys.size, dtype=jnp.int32))[:K]
    stage, column = slot // M, slot % M
    by_key = lambda x: x[stage, ..., column]     # [S, .., M] -> [K, ..]
    bank = jnp.moveaxis(by_key(exits.bank), 0, -1)             # [T + 1, K]
    return cls(bank.reshape((-1,) + seats.key_shape),
               by_key(exits.slope)[:, None], by_key(tables.farkle),
               by_key(stale_errors(w0, exits, tables, plan)))


def correct(w0: jax.Array, exits: SeatExits, tables: SeatTables,
            plan: SeatPlan, floor: jax.Array | float = 0.0
            ) -> tuple[jax.Array, jax.Array, jax.Array]:
  """The sweep's output w0 [K + 1, N] corrected by the Newton step;
  `floor` [] the change of delta that is exact enough near the fixed point
  (`NEAR`; in the solve's units: a fraction of its tolerance).

  Jacobi passes over every key at once: the banks of all turns are T + 1
  shifted products of whole arrays, where the sweep's stage order read
  each bank by a gather. A pass does less (the rest of the game after one
  more turn, where Gauss-Seidel in sweep order took every bank chain at
  once) but costs a fraction of one (BENCHMARKS.md).

  Returns:
    w0 + delta; the passes taken; the largest |delta|.
  """
  system = _System.of(w0, exits, tables, plan)
  scale = jnp.abs(system.stale).max()

  def sweep(p: _Pass) -> _Pass:
    delta = _apply(p.delta, system, plan.seats)
    return _Pass(delta, p.passes + 1, jnp.abs(delta - p.delta).max(),
                 p.change)

  aim = jnp.where(scale < NEAR, jnp.minimum(floor, INNER_SHRINK * scale),
                  INNER_SHRINK * scale)
  more = lambda p: ((p.passes < INNER_PASSES) & (p.change > aim)
                    & (p.change < STALL * p.before))
  inf = jnp.asarray(jnp.inf, w0.dtype)
  start = _Pass(jnp.zeros_like(system.stale), jnp.zeros((), jnp.int32),
                jnp.asarray(jnp.finfo(w0.dtype).max, w0.dtype), inf)
  done = jax.lax.while_loop(more, sweep, start)
  delta = jnp.concatenate([done.delta, jnp.zeros_like(w0[-1:])])
  w0 = vector_pass.sum_closed((w0 + delta).T).T
  return w0, done.passes, jnp.abs(delta).max()


def _apply(delta: jax.Array, system: _System, seats) -> jax.Array:
  """[K, N] one Jacobi pass: R(sum_t bank[t] delta[bank target t]
  + slope delta[farkle target]) + stale, from delta [K, N]."""
  n, B, T1 = seats.players, seats.num_scores, system.bank.shape[0]
  # d[x, s1.., f0, f1..]: what a banker (s0, s1.., f0, f1..) reaching
  # score index x reads; the banks of t are the rows x = on_board(s0) + t.
  d = seats.bank_targets(delta.reshape(seats.key_shape + (n,)), jnp)
  d = jnp.concatenate([d, jnp.zeros((T1,) + d.shape[1:], d.dtype)])
  board = np.asarray(seats.on_board(np.arange(B)))
  plain = np.array_equal(board, np.arange(B))
  ahead = 0
  # Below every bank floor the exits are zero; rows past the goal read
  # the zeros: a bank there wins.
  for t in range(int(np.min(seats.bank_floor(np.arange(B)))), T1):
    reach = d[t:t + B] if plain else d[np.minimum(board + t, B)]
    ahead = ahead + system.bank[t][..., None].astype(d.dtype) * reach
  ahead = (ahead.reshape(delta.shape)
           + system.slope * delta[system.farkle])
  return seats.from_next(ahead, jnp, axis=1) + system.stale


compiled_correct = jax.jit(correct, static_argnames=("plan",),
                           donate_argnums=(0,))
