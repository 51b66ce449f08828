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
farkles down), so Gauss-Seidel passes stage by stage in sweep order solve
it, over start vectors only (a stage's sub-batches with keys CHUNK at a
time): a pass reads T + 1 bank exits per key, a fraction of what a sweep's
turn passes read.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from farkle_jax.solver.multiplayer import SeatPlan, SeatTables

EXIT_DTYPE = jnp.float32   # bank exits: a Newton step tolerates their 1e-7
                           # relative error (the next sweep measures it)
INNER_PASSES = 40          # most Gauss-Seidel passes of one correction
INNER_SHRINK = 1e-6        # passes stop once they change delta by less than
                           # this fraction of the largest stale error


class SeatExits(NamedTuple):
  """How every key's turn ended in the last sweep (stage-major, as the
  tables)."""
  bank: jax.Array   # [S, T + 1, M] EXIT_DTYPE probability of banking t
  slope: jax.Array  # [S, M] probability of a farkle
  read: jax.Array   # [S, N, M] the farkle read the sweep saw, seen from
                    #   the mover


def empty(tables: SeatTables, plan: SeatPlan) -> SeatExits:
  """Zero exits for the tables' stages."""
  S, M = tables.keys.shape
  n, rows = plan.seats.players, plan.seats.num_rows + 1
  return SeatExits(jnp.zeros((S, rows, M), EXIT_DTYPE),
                   jnp.zeros((S, M), jnp.float64),
                   jnp.zeros((S, n, M), jnp.float64))


def footprint(seats, stages: int, width: int) -> int:
  """Bytes of the exits and the correction's work arrays for `stages`
  stages of `width` keys (`SeatTables.keys` [S, M])."""
  n, rows = seats.players, seats.num_rows + 1
  keys = stages * width
  exits = keys * (rows * 4 + 8 + n * 8)
  work = keys * n * 8 * 3 + (seats.num_keys + 1) * n * 8 * 2
  return exits + work


def record(exits: SeatExits, s: jax.Array, bank: jax.Array,
           slope: jax.Array, read: jax.Array) -> SeatExits:
  """`exits` with stage s's: bank [T + 1, M], slope [M], read [N, M]."""
  put = lambda a, x: jax.lax.dynamic_update_index_in_dim(
      a, x.astype(a.dtype), s, axis=0)
  return SeatExits(put(exits.bank, bank), put(exits.slope, slope),
                   put(exits.read, read))


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


CHUNK = 16   # sub-batches of a stage updated together (a loop step per
             # sub-batch cost 5x the work of its keys on a CPU; a whole
             # stage, 2.4x: it reads the padding too)


def correct(w0: jax.Array, exits: SeatExits, tables: SeatTables,
            plan: SeatPlan) -> tuple[jax.Array, jax.Array, jax.Array]:
  """The sweep's output w0 [K + 1, N] corrected by the Newton step.

  Returns:
    w0 + delta; the Gauss-Seidel passes taken; the largest |delta|.
  """
  r = stale_errors(w0, exits, tables, plan)                     # [S, N, M]
  scale = jnp.abs(r).max()
  # Each stage's sub-batches with keys, CHUNK at a time, stage by stage.
  real = tables.top >= 0                                        # [S, U]
  counts = real.sum(axis=1)
  order = jax.vmap(lambda x: jnp.nonzero(
      x, size=x.shape[0] + CHUNK, fill_value=0)[0])(real)   # [S, U + CHUNK]
  one = _chunk(exits, tables, r, plan)

  def stage(s, carry):
    steps = (counts[s] + CHUNK - 1) // CHUNK
    return jax.lax.fori_loop(
        0, steps, lambda i, c: one(s, order[s], i * CHUNK, counts[s], *c),
        carry)

  def sweep(p: _Pass) -> _Pass:
    delta, change = jax.lax.fori_loop(0, real.shape[0], stage,
                                      (p.delta, jnp.zeros((), w0.dtype)))
    return _Pass(delta, p.passes + 1, change)

  more = lambda p: ((p.passes < INNER_PASSES)
                    & (p.change > INNER_SHRINK * scale))
  start = _Pass(jnp.zeros_like(w0), jnp.zeros((), jnp.int32),
                jnp.asarray(jnp.inf, w0.dtype))
  done = jax.lax.while_loop(more, sweep, start)
  return w0 + done.delta, done.passes, jnp.abs(done.delta).max()


def _chunk(exits: SeatExits, tables: SeatTables, r: jax.Array,
           plan: SeatPlan):
  """One Gauss-Seidel update of up to CHUNK sub-batches of stage s, as
  (s, order, first, count, delta, change) -> (delta, change): the
  sub-batches order[first:first + CHUNK] that come before `count`."""
  seats, U, G = plan.seats, plan.batches, plan.group
  T1 = seats.num_rows + 1

  def one(s, order, first, count, delta, change):
    u = jax.lax.dynamic_slice_in_dim(order, first, CHUNK)       # [Q]
    # Stage s's [M] -> [Q, G]; [X, M] -> [Q, X, G].
    pick = lambda x: jnp.moveaxis(
        x[s].reshape(x.shape[1:-1] + (U, G))[..., u, :], -2, 0)
    keys, farkle, base, s0, real = (pick(x) for x in (
        tables.keys, tables.farkle, tables.bank_base, tables.s0,
        tables.real))
    sink = delta.shape[0] - 1
    live = (first + jnp.arange(CHUNK) < count)[:, None] & real  # [Q, G]
    keys = jnp.where(live, keys, sink)
    t = jnp.arange(T1)[None, :, None]
    pos = jnp.where(s0[:, None] + t >= seats.num_scores, sink,
                    base[:, None] + t * seats.score_stride)  # [Q, T + 1, G]
    bank = pick(exits.bank).astype(delta.dtype)              # [Q, T + 1, G]
    ahead = jnp.einsum("qtg,qtgn->qng", bank, delta[pos],
                       precision=jax.lax.Precision.HIGHEST)
    ahead = ahead + pick(exits.slope)[:, None] * jnp.moveaxis(
        delta[farkle], -1, 1)                                # [Q, N, G]
    d = seats.from_next(ahead, jnp, axis=1) + pick(r)
    d = jnp.where(live[:, None], d, 0)
    old = jnp.moveaxis(delta[keys], -1, 1)
    change = jnp.maximum(change, jnp.abs(d - old).max())
    return delta.at[keys].set(jnp.moveaxis(d, 1, -1)), change

  return one


compiled_correct = jax.jit(correct, static_argnames=("plan",),
                           donate_argnums=(0,))
