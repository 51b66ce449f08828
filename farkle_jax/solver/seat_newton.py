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

The system has the sweep's own order (banks up the score sums, penalty
farkles down), so Gauss-Seidel passes stage by stage in sweep order
solve it, over start vectors only, a whole stage at a time: a pass reads
T + 1 bank exits per key, a fraction of what a sweep's turn passes read.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from farkle_jax.solver import vector_pass
from farkle_jax.solver.multiplayer import SeatPlan, SeatTables

EXIT_DTYPE = jnp.float32   # bank exits: a Newton step tolerates their 1e-7
                           # relative error (the next sweep measures it)
INNER_PASSES = 40          # most Gauss-Seidel passes of one correction
INNER_SHRINK = 1e-6        # passes stop once they change delta by less than
                           # this fraction of the largest stale error ...
NEAR = 1e-2                # ... or, stale errors below this, by less than
                           # the caller's `floor`: near the fixed point the
                           # policies may have settled, and a step exact to
                           # the tolerance lets the next sweep be the last
STALL = 0.9                # passes that shrink the change less stop


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
  work = keys * n * 8 * 3 + (seats.num_keys + 1) * n * 8 * 2
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
  delta: jax.Array   # [K + 1, N] the correction so far (row K: zeros)
  passes: jax.Array  # [] int32 passes done
  change: jax.Array  # [] largest change of delta in the last pass
  before: jax.Array  # [] the same of the pass before


def correct(w0: jax.Array, exits: SeatExits, tables: SeatTables,
            plan: SeatPlan, floor: jax.Array | float = 0.0
            ) -> tuple[jax.Array, jax.Array, jax.Array]:
  """The sweep's output w0 [K + 1, N] corrected by the Newton step;
  `floor` [] the change of delta that is exact enough near the fixed point
  (`NEAR`; in the solve's units: a fraction of its tolerance).

  Returns:
    w0 + delta; the Gauss-Seidel passes taken; the largest |delta|.
  """
  r = stale_errors(w0, exits, tables, plan)                     # [S, N, M]
  scale = jnp.abs(r).max()
  one = _stage(exits, tables, r, plan)

  def sweep(p: _Pass) -> _Pass:
    # A stage at a time, whole: on a CPU a loop over its sub-batches cost
    # 5x as much as the padding a whole stage reads.
    delta, change = jax.lax.fori_loop(0, tables.keys.shape[0], one,
                                      (p.delta, jnp.zeros((), w0.dtype)))
    return _Pass(delta, p.passes + 1, change, p.change)

  aim = jnp.where(scale < NEAR, jnp.minimum(floor, INNER_SHRINK * scale),
                  INNER_SHRINK * scale)
  more = lambda p: ((p.passes < INNER_PASSES) & (p.change > aim)
                    & (p.change < STALL * p.before))
  inf = jnp.asarray(jnp.inf, w0.dtype)
  start = _Pass(jnp.zeros_like(w0), jnp.zeros((), jnp.int32),
                jnp.asarray(jnp.finfo(w0.dtype).max, w0.dtype), inf)
  done = jax.lax.while_loop(more, sweep, start)
  w0 = vector_pass.sum_closed((w0 + done.delta).T).T
  return w0, done.passes, jnp.abs(done.delta).max()


def _stage(exits: SeatExits, tables: SeatTables, r: jax.Array,
           plan: SeatPlan):
  """One Gauss-Seidel update of the keys of stage s, as
  (s, (delta, change)) -> (delta, change)."""
  seats = plan.seats
  T1 = seats.num_rows + 1

  def one(s, carry):
    delta, change = carry
    keys, farkle, base, s0 = (x[s] for x in (
        tables.keys, tables.farkle, tables.bank_base, tables.s0))
    t = jnp.arange(T1)[:, None]
    sink = delta.shape[0] - 1
    reach = seats.on_board(s0, jnp)[None] + t
    pos = jnp.where(reach >= seats.num_scores, sink,
                    base[None] + t * seats.score_stride)        # [T + 1, M]
    bank = exits.bank[s].astype(delta.dtype)
    ahead = jnp.einsum("tm,tmn->nm", bank, delta[pos],
                       precision=jax.lax.Precision.HIGHEST)
    ahead = ahead + exits.slope[s][None] * delta[farkle].T     # [N, M]
    d = seats.from_next(ahead, jnp) + r[s]
    d = jnp.where(tables.real[s][None], d, 0)
    change = jnp.maximum(change, jnp.abs(d - delta[keys].T).max())
    return delta.at[keys].set(d.T), change

  return one


compiled_correct = jax.jit(correct, static_argnames=("plan",),
                           donate_argnums=(0,))
