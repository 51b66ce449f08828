"""A run of an N-player sweep's steps in one compiled loop (docs/model.md
§8).

A sweep of the seat engine is a sequence of steps: stages without a
penalty (`multiplayer.stage_step`), blocks of stages under one
(`penalty_blocks.block_step`). `steps` runs any contiguous range of them
as one `fori_loop` over data, so a sweep is one program whatever its
length: the engine asks for a whole sweep at once where it is quick, and
for shorter runs where a long sweep must log its progress and save its
position (`stage_engine`). One dispatch a step cost a launch per stage on
a GPU and a Python round trip per stage everywhere.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from farkle_jax.solver import multiplayer, penalty_blocks, seat_newton
from farkle_jax.solver.bellman import RollArrays
from farkle_jax.solver.multiplayer import SeatPlan, SeatTables


class Run(NamedTuple):
  """What a run of steps leaves (the loop's state)."""
  w0: jax.Array         # [K + 1, N] win probabilities by seat, per key
  change: jax.Array     # [] largest change of the steps' values
  passes: jax.Array     # [] int32 turn passes of stages taken
  work: jax.Array       # [] states evaluated, in passes over all states
  unsettled: jax.Array  # [] int32 keys left unsettled (no penalty)
  apart: jax.Array      # [] their largest gap between two policy steps
  exits: seat_newton.SeatExits | None   # with `plan.newton`: every stage's


def steps(w0: jax.Array, tables: SeatTables, lo: jax.Array, hi: jax.Array,
          first: jax.Array, roll: RollArrays, plan: SeatPlan,
          exits: seat_newton.SeatExits | None = None) -> Run:
  """Steps lo .. hi - 1 of the sweep: stage indices without a penalty
  (`plan.cycles`), block indices under one.

  Args:
    w0: [K + 1, N] start vectors (row K: the sink).
    lo, hi: [] int32 the range of steps.
    first: [] bool, the first sweep (`tables.warm` guesses).
    exits: with `plan.newton`, every stage's exits so far.
  """
  zero = jnp.zeros((), w0.dtype)
  count = jnp.zeros((), jnp.int32)
  start = Run(w0, zero, count, zero, count, zero,
              exits if plan.newton else None)
  per = plan.seats.stages_per_block

  def stage(s, r: Run) -> Run:
    w0, ch, taken, n_open, gap = multiplayer.stage_step(
        r.w0, tables, s, first, roll, plan)
    return Run(w0, jnp.maximum(r.change, ch), r.passes + taken,
               r.work + taken * tables.work[s], r.unsettled + n_open,
               jnp.maximum(r.apart, gap), None)

  def block(b, r: Run) -> Run:
    w0, ch, *more = penalty_blocks.block_step(r.w0, tables, b, first, roll,
                                              plan, r.exits)
    work = jax.lax.dynamic_slice_in_dim(tables.work, b * per, per).sum()
    return r._replace(w0=w0, change=jnp.maximum(r.change, ch),
                      passes=r.passes + per, work=r.work + work,
                      exits=more[0] if more else None)

  out = jax.lax.fori_loop(lo, hi, stage if plan.cycles else block, start)
  if out.exits is None or plan.mesh is None:
    return out
  # The exits leave as they came (`seat_newton.empty`): one compilation
  # for the first run of steps and the later ones.
  return out._replace(exits=jax.lax.with_sharding_constraint(
      out.exits, seat_newton.shardings(plan.mesh)))


compiled_steps = jax.jit(steps, static_argnames=("plan",),
                         donate_argnums=(0, 7))
