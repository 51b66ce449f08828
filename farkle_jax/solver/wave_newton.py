"""The wavefront's Newton step on its penalty reads (docs/model.md §4.3).

A wavefront sweep, like an ordered one, reads the opponent's start value
after a penalty farkle (a lower score sum, solved later in the sweep) at
its previous value; every other read is final or solved with the keys that
read it. So the ordered method's Newton correction (`solver.newton`)
applies to it, with the pieces' stale reads those whose target finishes
after the key (at the floor a penalty target can finish with it, and is
then solved in its finishing group, not read stale).

The correction needs each turn's exits (how it ends under the policy). The
wavefront keeps only a ring of recent rows, so they come from a pass of
their own: every key's turn pass with picks and its forward pass, all
reads from the start vector (`ordered.exits`): two evaluations of every
state, in the ordered method's stages and sub-batches. The exits are
refreshed where they pay, not every sweep:

* first once a sweep changes the start values by less than REFRESH_BELOW
  (before that the policy is still far from its last), or once a sweep
  after the second shrinks the change less than REFRESH_STALL (the penalty
  chains, which the step solves, are what is left: on `facebook` the
  relative change stalls in the hundreds, at hopeless positions);
* again when a corrected sweep shrinks the change by less than
  REFRESH_SHRINK (the policy has moved under the exits), unless the change
  is down to rounding or near the tolerance (nor a first one there).

Near the tolerance, and for good once fresh exits fail to shrink the
change 10x (the policy flipping at near ties, which held one `facebook`
run at a change of 1.9e-9), the sweeps run uncorrected: plain sweeps
always contract.

Between refreshes every sweep is corrected with the last exits: a Newton
step while the policy holds, a step that converges linearly and fast while
few choices change. On `configs/default.py`: 8 sweeps and one refresh, 10
evaluations of every state, against 11 sweeps without (BENCHMARKS.md).

Fewer evaluations are not less time here: a refresh reads what the ordered
method's turn pass reads (each option's target, 14x a wavefront sweep's
bytes on `configs/default.py`) in its many small loop steps, and each
correction pass is thousands more. So the step is off by default; it pays
once the exits come from the wavefront's own sweep (its picks kept per key
row and a forward wavefront over them) and the correction runs a stage at
a time.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman, newton, ordered
from farkle_jax.solver.wave_schedule import finish_steps

REFRESH_BELOW = 0.1   # first exits once a sweep's change is below this
                      # (at 1, after the first sweep's guesses, the policy
                      # had not settled on `configs/default.py`),
REFRESH_STALL = 0.5   # or falls by less than this factor
REFRESH_SHRINK = 0.1  # exits again when a corrected sweep's change falls
                      # by less than this factor ...
REFRESH_FLOOR = 1e4   # ... and is above this many units of rounding
                      # (below, changes are rounding, not the policy)
REFRESH_NEAR = 100    # no refresh once the change is within this factor
                      # of the tolerance: a sweep or two remain


class NewtonTables(NamedTuple):
  """The ordered stages whose turn passes give the exits (device arrays)."""
  stages: ordered.StageTables
  roll: bellman.RollArrays


class NewtonPlan(NamedTuple):
  """Static sizes (hashable: a jit constant)."""
  stages: ordered.StagePlan
  exit_steps: int   # dependent loop steps of a refresh
  near: float       # no refresh below this change (REFRESH_NEAR x tol)


class Exits(NamedTuple):
  """What the Newton step keeps between sweeps (method state)."""
  buffer: jax.Array       # [N] float32 bank exits (`newton.ExitTables`)
  farkle: jax.Array       # [V] farkle exit per key position
  ready: jax.Array        # [] bool the exits have been computed
  last: jax.Array         # [] change of the previous sweep (inf: none)
  steady: jax.Array       # [] bool that sweep's input was not the initial
                          #   values (its change measures convergence)
  renewed: jax.Array      # [] bool that sweep refreshed the exits
  off: jax.Array          # [] bool corrections stopped for this run


def applies(layout: StateLayout) -> bool:
  """Only where a sweep reads start values before it solves them
  (`ordered.reads_stale`); elsewhere a wavefront sweep is exact up to the
  policy."""
  return ordered.reads_stale(layout)


def build(layout: StateLayout, roll: bellman.RollArrays, relative: bool,
          b_group: int, tol: float = 0.0
          ) -> tuple[NewtonTables, NewtonPlan]:
  """The exits' stages (sub-batches of `b_group` banked scores) and the
  correction's pieces, stale where the wavefront reads stale; `tol` the
  run's tolerance."""
  finish, _ = finish_steps(layout)
  order = np.full(layout.padded_size, -1, np.int64)
  order[layout.padded_index(*layout.key_fields())] = finish
  stages, plan = ordered.build(layout, relative, b_group, 1, True, order)
  return (NewtonTables(stages, roll),
          NewtonPlan(plan, ordered.exit_steps(stages), REFRESH_NEAR * tol))


def initial(vector: jax.Array, plan: NewtonPlan) -> Exits:
  """No exits yet (a run's start, or a resumed one)."""
  return Exits(jnp.zeros((plan.stages.exit_size,), newton.EXIT_DTYPE),
               jnp.zeros_like(vector), jnp.zeros((), jnp.bool_),
               jnp.asarray(jnp.inf, vector.dtype), jnp.zeros((), jnp.bool_),
               jnp.zeros((), jnp.bool_), jnp.zeros((), jnp.bool_))


def shapes(vector: jax.ShapeDtypeStruct, plan: NewtonPlan, sharding
           ) -> Exits:
  """The ShapeDtypeStructs of `Exits`."""
  shape = lambda s, d: jax.ShapeDtypeStruct(s, d, sharding=sharding)
  return Exits(shape((plan.stages.exit_size,), newton.EXIT_DTYPE),
               shape(vector.shape, vector.dtype), shape((), jnp.bool_),
               shape((), vector.dtype), shape((), jnp.bool_),
               shape((), jnp.bool_), shape((), jnp.bool_))


def step(new: jax.Array, old: jax.Array, change: jax.Array,
         fresh: jax.Array, exits: Exits, tables: NewtonTables,
         plan: NewtonPlan) -> tuple[jax.Array, jax.Array, Exits, jax.Array,
                                    jax.Array]:
  """The Newton step after a wavefront sweep from `old` to `new`.

  Args:
    new, old: [V] the sweep's output and input; change: [] its largest
      change; fresh: [] bool its input held initial values (its penalty
      reads were guesses: no correction).
    exits: the kept exits; tables, plan: the refresh's stages.

  Returns:
    The corrected vector, its largest change from `old`, the exits kept,
    the extra work (evaluations of every state) and the extra dependent
    loop steps.
  """
  sp = plan.stages
  floor = max(REFRESH_FLOOR * float(jnp.finfo(new.dtype).eps), plan.near)
  stalled = exits.steady & (change > REFRESH_STALL * exits.last)
  poor = change > REFRESH_SHRINK * exits.last
  # Fresh exits that did not shrink the change: near ties the policy
  # flips under any exits, and corrections would hold the change there;
  # plain sweeps contract. Near the tolerance plain sweeps finish too.
  off = exits.off | (exits.ready & exits.renewed & poor)
  live = ~fresh & ~off & (change > floor)
  refresh = live & jnp.where(exits.ready, poor,
                             (change < REFRESH_BELOW) | stalled)
  buffer, farkle = jax.lax.cond(
      refresh,
      lambda: ordered.exits(new, tables.stages, tables.roll, sp),
      lambda: (exits.buffer, exits.farkle))
  ready = exits.ready | refresh
  apply = ready & live
  vector, passes = jax.lax.cond(
      apply,
      lambda: newton.correct(new, old, buffer, farkle,
                             tables.stages.newton.pieces, sp.layout,
                             sp.relative),
      lambda: (new, jnp.zeros((), jnp.int32)))
  moved = jnp.where(apply, ordered.largest_change(vector, old, sp.relative),
                    change)
  work = 2 * refresh.astype(jnp.float64)
  steps = (refresh.astype(jnp.int64) * plan.exit_steps
           + passes.astype(jnp.int64) * sp.pass_steps)
  return (vector, moved, Exits(buffer, farkle, ready, change, ~fresh,
                               refresh, off), work, steps)
