"""N players under a farkle penalty: the sweep a block at a time, with the
block's own farkle reads solved exactly (docs/model.md §8).

A block (bank_min score sums) holds one stage per farkle-count class. Its
stages run highest class first, so a farkle that does not cost the penalty
reads a value solved earlier in the block. A penalty farkle by a player at
or near the floor lowers the score sum by less than a block, or not at
all: it lands in a lower class of the same block, solved after the reader.
Read at the previous sweep's value, such a read passes its error on one
chain of penalties per sweep: with every player at the floor and two
farkles down, the changes fell about 20x every three sweeps, and those keys
alone set the sweep count.

With the turn policies the stages chose, each key's value is affine in the
one farkle target it reads, with the farkle channel `a_k` as slope:

    x_k = c_k + a_k R(x_target(k)),   c_k = x̂_k - a_k R(read_k)

(x̂_k the stage's output, read_k what its farkle read saw). Targets in the
block make a functional graph (each key reads one), chains and cycles,
solved exactly by pointer doubling; targets outside it keep the value read.
This is one policy-iteration step on the block's farkle reads: only the
penalty farkles that leave the block read the previous sweep.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from farkle_jax.solver import multiplayer, seat_newton, vector_pass
from farkle_jax.solver.bellman import RollArrays
from farkle_jax.solver.multiplayer import SeatPlan, SeatTables

# Doublings of the farkle graph: 2^24 reads follow every chain to its end,
# and a cycle's slope product (< 1: a turn need not farkle), raised so
# often, has vanished.
DOUBLINGS = 24


def solve_chains(c: jax.Array, a: jax.Array, partner: jax.Array,
                 players: int) -> jax.Array:
  """Solves x_k = c_k + a_k R(x_partner(k)) for every k exactly.

  Args:
    c: [N, M] constant parts; a: [M] slopes, 0 where the key reads nothing
      of the system; partner: [M] int32 the key each key reads (any
      function; itself where its slope is 0); players: N, for R.

  Returns:
    [N, M] the solution.
  """
  def double(_, carry):
    total, slope, j, shift = carry
    # x_k = total_k + slope_k R^shift(x_j(k)): substitute x_j(k)'s own.
    total = total + slope[None] * jnp.roll(total[:, j], shift, axis=0)
    return (total, slope * slope[j], j[j], (2 * shift) % players)

  total, *_ = jax.lax.fori_loop(
      0, DOUBLINGS, double, (c, a, partner, jnp.int32(1 % players)))
  return total


def block_step(w0: jax.Array, tables: SeatTables, b: jax.Array,
               first: jax.Array, roll: RollArrays, plan: SeatPlan,
               exits: seat_newton.SeatExits | None = None):
  """Solves block b in place: its stages, then its farkle graph.

  Args:
    w0: [K + 1, N] start vectors (row K: the sink).
    b: [] int32 the block; first: [] bool, the first sweep (the block
      starts from `tables.warm`).
    exits: with `plan.newton`, every stage's exits so far.

  Returns:
    w0 updated; the largest change of the block's values (or relative
    change) since the call; with `plan.newton`, `exits` with the block's.
  """
  n, per = plan.seats.players, plan.seats.stages_per_block
  M = tables.keys.shape[1]
  rows = b * per + jnp.arange(per)
  keys, real = tables.keys[rows].reshape(-1), tables.real[rows].reshape(-1)
  before = w0[keys].T                                           # [N, P * M]
  w0 = jax.lax.cond(first, lambda w0: _warm(w0, tables, rows, n),
                    lambda w0: w0, w0)

  def stage(j, carry):
    w0, slope, read, exits = carry
    s = b * per + j
    farkle = jnp.where(first, tables.first_farkle[s], tables.farkle[s])
    got = plan.seats.from_next(w0[farkle].T, jnp)               # [N, M]
    v = multiplayer.stage_pass(w0, tables, s, roll, plan, farkle,
                               exits=plan.newton)               # [C, M]
    if plan.newton:
      v, bank = v
      exits = seat_newton.record_bank(exits, s, bank)
    w0 = w0.at[tables.keys[s]].set(v[:n].T)
    slope = jax.lax.dynamic_update_slice_in_dim(slope, v[n], j * M, 0)
    read = jax.lax.dynamic_update_slice_in_dim(read, got, j * M, 1)
    return w0, slope, read, exits

  w0, slope, read, exits = jax.lax.fori_loop(0, per, stage, (
      w0, jnp.zeros((per * M,), w0.dtype), jnp.zeros((n, per * M), w0.dtype),
      exits))
  if plan.newton:
    exits = seat_newton.record_reads(exits, b * per, slope, read)
  # Targets outside the block keep what was read: slope 0, read itself.
  chain = tables.chain[rows].reshape(-1)
  inside = real & (chain >= 0)
  slope = jnp.where(inside, slope, 0)
  partner = jnp.where(inside, chain, jnp.arange(per * M))
  out = w0[keys].T
  x = vector_pass.sum_closed(
      solve_chains(out - slope[None] * read, slope, partner, n))
  w0 = w0.at[keys].set(x.T)
  change = multiplayer.largest_change(x, before, real, plan.relative)
  return (w0, change, exits) if plan.newton else (w0, change)


def _warm(w0: jax.Array, tables: SeatTables, rows: jax.Array,
          players: int) -> jax.Array:
  """w0 with the block's keys at the first sweep's guesses."""
  for j in range(rows.shape[0]):
    w0 = multiplayer.first_guess(w0, tables, rows[j], players)
  return w0


compiled_block_step = jax.jit(block_step, static_argnames=("plan",),
                              donate_argnums=(0, 6))
