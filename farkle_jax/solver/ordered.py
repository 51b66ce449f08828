"""The fast solve: start-of-turn values only, Gauss-Seidel in score order.

Every in-turn value follows from the start-of-turn values W0, so this method
(docs/model.md §4.2) stores W0 alone, as the padded start vector of
`game.layout`, and rebuilds each turn on the fly. It updates W0 in
place, key by key in a fixed order that makes most dependencies final:

* Keys are grouped by their score sum s = b + d (index units). Banking t from
  key (b, d) gives the opponent key (d, b + t), of sum s + t >= s + bank_min;
  so keys are processed from the highest sum down, in *stages* of bank_min
  consecutive sums, and every bank a stage needs is already updated.
* A farkle leads to the opponent's key of the same sum (the turn passes) or,
  after the penalty, of a lower sum (which uses the previous sweep's value).
  With a penalty, a farkle raises the farkle count, so within a sum the keys
  are processed by farkle-count class f + e, highest first, and every
  same-sum farkle target is already updated. Without a penalty, (b, d) and
  (d, b) depend on each other: a turn's start value is a convex
  piecewise-linear function of its farkle value X whose slope is the
  probability the turn ends in a farkle under the policy optimal at the
  current X, so the stage evaluates value and slope (a JVP of the turn pass)
  and solves the pairs exactly by pointer doubling.
* A stage's keys are cut into sub-batches of nearby b, whose turn passes start
  at their own highest turn total, so ragged turn lengths cost nothing.

Without a penalty one sweep is exact up to the policy: the next confirms it.
With a penalty the sweep reads the penalty farkles' targets at their
previous values; it records how each turn ends and closes with a Newton
step on those reads (`solver.newton`), so a few sweeps converge
quadratically. The sub-batches of
a stage are split over all devices of a mesh (`jax.shard_map`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman, change_norm, newton, placement

DOUBLINGS = 24  # pointer-doubling rounds: a cycle's slope product ^ 2^24 -> 0
NEWTON_STEPS = 4  # most in-stage Newton steps (policy updates) per sweep
NEWTON_RTOL = 1e-13  # a stage's Newton steps stop below this relative change


class StageTables(NamedTuple):
  """Keys of every stage, as positions in the padded W0 vector."""
  keys: jax.Array       # [S, U, G] int32 key position (dummy: last slot)
  farkle: jax.Array     # [S, U, G] int32 position of the farkle target
  partner: jax.Array    # [S, U * G] int32 stage-local index of the farkle
                        #   target, or -1 when it lies outside the stage
  bank_base: jax.Array  # [S, U, G] int32 bank position at t = 0
  top: jax.Array        # [S, U] int32 highest row of each sub-batch (-1: none)
  work: jax.Array       # [S] float, the stage's states / all model states
  warm: jax.Array       # [S, U, G] int32 position of (b, d + 1, f, e), a
                        #   first guess solved by an earlier stage
  first: jax.Array      # [S, U, G] int32 column of the key's start state
                        #   (its mover's whole hand, `layout.start_state`)
  guess: jax.Array      # [S, U, G] int32 with a penalty: for a key whose
                        #   farkle target comes later in the sweep, the
                        #   key a run's first sweep reads instead
                        #   (`first_guesses`; the sink for the others)
  newton: newton.NewtonTables  # exit slots and correction pieces


class StagePlan(NamedTuple):
  """Static sizes of the ordered solver (hashable: a jit constant)."""
  layout: StateLayout
  relative: bool    # residual |dW| / W instead of |dW|
  group: int        # keys per sub-batch, G
  slopes: bool      # solve in-stage farkle dependencies (no penalty)
  newton: bool      # correct the penalty reads after each sweep
  exit_size: int    # length of the flat exit buffer (newton)
  pass_steps: int   # loop steps of one pass of the correction (newton)


def build(layout: StateLayout, relative: bool, b_group: int = 8,
          devices: int = 1, newton_step: bool = True,
          solve_order: np.ndarray | None = None) -> tuple[StageTables,
                                                          StagePlan]:
  """Stages, sub-batches and index tables of the ordered solver.

  Args:
    layout: the state layout.
    relative: the residual is |dW| / W instead of |dW|.
    b_group: consecutive banked scores b per sub-batch.
    devices: the number of sub-batches per stage is padded to a multiple.
    newton_step: with a penalty, end each sweep with the Newton correction
      of its penalty reads (`solver.newton`).
    solve_order: another sweep's order, for its correction (`newton.build`).
  """
  B, D, F, E = layout.key_shape
  dummy = layout.sink
  b, d, f, e = layout.key_fields()
  stage = (B + D - 2 - (b + d)) // layout.bank_min
  slopes = not reads_stale(layout)
  if not slopes:  # classes of f + e, highest first, within each block
    stage = stage * (2 * F - 1) + (2 * F - 2 - (f + e))
  sub = b // b_group
  S = int(stage.max()) + 1
  n_sub = -(-B // b_group)
  U = -(-n_sub // devices) * devices  # sub-batches per stage
  order = np.lexsort((e, f, d, b, sub, stage))
  b, d, f, e, stage, sub = (x[order] for x in (b, d, f, e, stage, sub))
  cell = stage * U + sub
  slot = np.arange(len(cell)) - np.searchsorted(cell, cell, side="left")
  G = int(slot.max()) + 1

  at, shape = (stage, sub, slot), (S, U, G)
  pos = layout.padded_index(b, d, f, e)
  keys = _cells(shape, dummy, at, pos)
  first = _cells(shape, layout.dice_states - 1, at,
                 layout.start_state(f) - 1)            # the whole hands
  warm = _cells(shape, dummy, at, np.where(
      d + 1 < D, layout.padded_index(b, d + 1, f, e), pos))
  farkle = _cells(shape, dummy, at, layout.padded_index(
      *layout.farkle_fields((b, d, f, e))))
  bank = _cells(shape, 0, at, layout.bank_base((b, d, f, e)))
  top = np.full((S, U), -1, np.int64)
  np.maximum.at(top, (stage, sub), layout.t_max(b))
  partner = _partners(pos, farkle, stage, sub, slot, dummy)
  guess = _cells(shape, dummy, at, first_guesses(layout, (b, d, f, e),
                                                  slopes))
  states = np.bincount(stage, (layout.t_max(b) + 1) * layout.own_states(f),
                       S)
  t_max = _cells(shape, 0, at, layout.t_max(b))
  tables, exit_size, pass_steps = newton.build(
      layout, keys, farkle, layout.bank_position(bank, 0), t_max, solve_order)
  int32 = lambda x: placement.on_device(x, np.int32)
  stages = StageTables(*map(int32, (keys, farkle, partner, bank, top)),
                       work=placement.on_device(states / layout.num_states),
                       warm=int32(warm), first=int32(first),
                       guess=int32(guess), newton=tables)
  return stages, StagePlan(layout, relative, G, slopes,
                           newton_step and not slopes, exit_size, pass_steps)


def reads_stale(layout: StateLayout) -> bool:
  """Whether a sweep reads start values it has not yet solved: the
  penalty's targets (without a penalty, or with hands, a key's farkle
  target lies in its own stage and is solved with it)."""
  return layout.num_farkle > 1 and not layout.rules.hands


def _cells(shape, fill, at, values) -> np.ndarray:
  """[S, U, G] int64: `values` at the cells `at`, `fill` elsewhere."""
  out = np.full(shape, fill, np.int64)
  out[at] = values
  return out


def first_guesses(layout: StateLayout, fields, slopes: bool) -> np.ndarray:
  """Where a run's first sweep reads its penalty farkles from.

  A penalty farkle reads a key (d, b', e, 0) of a lower sum, solved later
  in the sweep; before any sweep it holds only the initial value, and the
  error of that guess travels one penalty further down per sweep. The
  first sweep reads instead the nearest key of a block solved already:
  the mover's score raised by the sum's distance plus the bank minimum
  (as far as it stays short of the goal, where the values jump; the rest
  raises the opponent's). Returns per key that position, or the sink
  where the read is not a penalty read.
  """
  b, d, f, e = fields
  B, D, _, _ = layout.key_shape
  bt, dt, ft, et = layout.farkle_fields(fields)
  total = b + d + layout.bank_min
  lower = (bt + dt < b + d) | ((bt + dt == b + d) & (ft + et < f + e))
  later = lower & (total - np.minimum(D - 1, total - bt) < B) & (not slopes)
  return np.where(later, layout.raised_key(
      layout.padded_index(bt, dt, ft, et), total), layout.sink)


def _partners(pos, farkle, stage, sub, slot, dummy) -> np.ndarray:
  """[S, U * G] stage-local index of each key's farkle target where it lies
  in the key's own stage, else -1."""
  S, U, G = farkle.shape
  local = np.full(dummy + 1, -1, np.int64)
  partner = np.full((S, U * G), -1, np.int64)
  flat_slot = sub * G + slot
  for s in range(S):
    sel = stage == s
    local[pos[sel]] = flat_slot[sel]
    partner[s, flat_slot[sel]] = local[farkle[stage[sel], sub[sel], slot[sel]]]
    local[pos[sel]] = -1
  return partner


def _turn_starts(vector, x_hat, bank_base, top, first, roll,
                 plan: StagePlan):
  """Start value (and its slope in the farkle value if plan.slopes), per key.

  Args:
    vector: [V] padded W0 (bank lookups).
    x_hat: [u, G] current farkle values.
    bank_base: [u, G] int32; top: [u] int32.
    first: [u, G] int32 the column of each key's start state.

  Returns:
    ([u, G] values, [u, G] slopes, [u, T + 1, G] bank exits, [u, G] farkle
    exits); slopes are zero unless plan.slopes, exits unless plan.newton.
  """
  layout = plan.layout
  S = layout.dice_states
  ones = jnp.ones((layout.num_rows + 1, S, plan.group), vector.dtype)

  def one(args):
    x, base, t, column = args
    keys = jnp.arange(plan.group)

    def start(rows):
      return rows[0, column, keys]

    def turn(x):
      return bellman.turn_pass(ones, x, vector, base, t, roll, layout,
                               plan.relative, picks=plan.newton)

    if plan.slopes:
      value, slope = jax.jvp(lambda x: start(turn(x)[0]), (x,),
                             (jnp.ones_like(x),))
      return value, slope, ones[:0, 0], jnp.zeros_like(x)
    rows, _, *picks = turn(x)  # picks: [the choices] with plan.newton
    if plan.newton:
      bank, farkle = bellman.turn_exits(rows, picks[0], vector, base, t,
                                        roll, layout)
    else:
      bank, farkle = ones[:0, 0], jnp.zeros_like(x)
    return start(rows), jnp.zeros_like(x), bank, farkle

  return jax.lax.map(one, (x_hat, bank_base, top, first))


def _solve_stage(values, slopes, x_hat, partner):
  """Solves x = v + slope * (X - x_hat) with X = 1 - x[partner] in-stage.

  Each key depends on at most one other key of the stage (its farkle
  target), so the system is a functional graph: pointer doubling composes
  the affine maps until every chain ends or every cycle's product vanishes.
  """
  inside = partner >= 0
  c = jnp.where(inside, values - slopes * x_hat + slopes, values)
  m = jnp.where(inside, -slopes, 0.0)
  p = jnp.where(inside, partner, jnp.arange(partner.shape[0]))

  def double(_, cmp):
    c, m, p = cmp
    return c + m * c[p], m * m[p], p[p]

  c, m, p = jax.lax.fori_loop(0, DOUBLINGS, double, (c, m, p))
  return c + m * c[p]


def _evaluate_stage(s, vector, stages: StageTables, roll: bellman.RollArrays,
                    plan: StagePlan, starts, exits=None, fresh=False
                    ) -> tuple[jax.Array, jax.Array, tuple | None]:
  """Evaluates the keys of stage s at the current farkle values (solving the
  in-stage pairs when plan.slopes); returns the updated vector, the largest
  relative change of the stage's keys and, with plan.newton, the exits
  (buffer, farkle exit per position) with the stage's written in."""
  keys = stages.keys[s].ravel()
  x_hat = 1 - _farkle_reads(s, vector, stages, plan, fresh)
  values, slopes, bank, farkle = starts(vector, x_hat, stages.bank_base[s],
                                        stages.top[s], stages.first[s], roll)
  if plan.newton:
    exits = _store_exits(exits, s, bank, farkle, stages, plan)
  x = values.ravel()
  if plan.slopes:
    x = _solve_stage(x, slopes.ravel(), x_hat.ravel(), stages.partner[s])
  real = keys < plan.layout.sink
  change = jnp.where(real, jnp.abs(x - vector[keys])
                     / jnp.maximum(x, jnp.finfo(x.dtype).tiny), 0).max()
  return vector.at[keys].set(x), change, exits


def _store_exits(exits, s, bank, farkle, stages: StageTables,
                 plan: StagePlan) -> tuple[jax.Array, jax.Array]:
  """(buffer, farkle exit per position) with stage s's exits written in:
  bank [U, T + 1, G], farkle [U, G]."""
  buffer, farkle_exit = exits
  return (newton.store(buffer, bank, s, stages.newton.exits,
                       plan.layout.bank_min),
          farkle_exit.at[stages.keys[s].ravel()].set(farkle.ravel()))


def _farkle_reads(s, vector, stages: StageTables, plan: StagePlan, fresh
                  ) -> jax.Array:
  """[U, G] the start values the keys of stage s farkle into; on a run's
  first sweep the penalty reads come from `first_guesses` (not with the
  Newton step, whose correction takes every penalty read to be the vector
  the sweep started from)."""
  read = vector[stages.farkle[s]]
  if plan.slopes or plan.newton:
    return read
  guess = stages.guess[s]
  return jnp.where(fresh & (guess < plan.layout.sink), vector[guess], read)


def _map_steps(stages: StageTables, passes: int = 1) -> jax.Array:
  """[S] loop iterations of one evaluation of each stage: the row loop of
  each sub-batch (`passes` of them: the turn pass, and the exits' forward
  pass with the Newton step), one after the other (a sub-batch without rows
  still takes a step), as `loop_steps.count` reads them."""
  return jnp.maximum(passes * (stages.top + 1), 1).sum(axis=1).astype(
      jnp.int64)


def _pair_stage(s, vector, evaluate, stages: StageTables, fresh):
  """Stage s without a penalty: Newton steps on the in-stage pairs until
  its values settle; returns the vector and the steps taken."""
  keys = stages.keys[s].ravel()
  guess = jnp.where(fresh, vector[stages.warm[s].ravel()], vector[keys])
  vector = vector.at[keys].set(guess)

  def policy_step(c):
    vector, steps, _ = c
    vector, change, _ = evaluate(s, vector, None)
    return vector, steps + 1, change

  # float32 cannot resolve 1e-13: its Newton steps stop at its rounding.
  rtol = max(NEWTON_RTOL, 16 * float(jnp.finfo(vector.dtype).eps))
  vector, steps, _ = jax.lax.while_loop(
      lambda c: (c[1] < NEWTON_STEPS) & (c[2] > rtol), policy_step,
      (vector, 0, jnp.asarray(jnp.inf, vector.dtype)))
  return vector, steps


def sweep(vector: jax.Array, stages: StageTables, roll: bellman.RollArrays,
          plan: StagePlan, mesh: Mesh, fresh: jax.Array | bool = False
          ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
  """One ordered Gauss-Seidel sweep over all stages.

  Without a penalty each stage takes Newton steps (value and slope at the
  current farkle values, solve the pairs, repeat) until its values settle;
  on a run's first sweep (`fresh`) they start from the key (b, d + 1) that
  an earlier stage has just solved; with a penalty, it reads the penalty
  farkles from solved keys (`first_guesses`). With a penalty and
  plan.newton the stages also record how each turn ends, and the sweep
  ends with the Newton correction of its penalty reads (`solver.newton`).

  Args:
    vector: [V] padded W0 (donate it); stages, roll: tables; plan: sizes.
    mesh: devices over which the sub-batches of a stage are split.
    fresh: [] bool, the vector holds initial values, not a previous sweep's.

  Returns:
    The new vector, the largest change of any start value (absolute or
    relative as configured) from the old vector, correction included, the
    work in sweeps of all states (turn passes and forward passes), and the
    dependent loop steps of the sweep (on one device).
  """
  old = vector
  row_passes = 2 if plan.newton else 1  # the turn pass, the forward pass
  map_steps = _map_steps(stages, row_passes)
  starts = jax.shard_map(
      functools.partial(_turn_starts, plan=plan), mesh=mesh,
      in_specs=(P(), *(P("batch"),) * 4, P()),
      out_specs=(P("batch"),) * 4, check_vma=False)

  def evaluate(s, vector, exits):
    return _evaluate_stage(s, vector, stages, roll, plan, starts, exits,
                           fresh)

  def stage(s, carry):
    vector, exits, work, count = carry
    if plan.slopes:
      vector, steps = _pair_stage(s, vector, evaluate, stages, fresh)
      return (vector, exits, work + steps * stages.work[s],
              count + jnp.maximum(steps * (map_steps[s] + DOUBLINGS), 1))
    vector, _, exits = evaluate(s, vector, exits)
    return (vector, exits, work + row_passes * stages.work[s],
            count + map_steps[s])

  exits = (jnp.zeros((plan.exit_size,), newton.EXIT_DTYPE),
           jnp.zeros_like(vector)) if plan.newton else None
  # The work count keeps the tables' float64 whatever the values' dtype.
  vector, exits, work, count = jax.lax.fori_loop(
      0, stages.keys.shape[0], stage,
      (vector, exits, jnp.zeros((), stages.work.dtype),
       jnp.zeros((), jnp.int64)))
  if plan.newton:
    vector, passes = newton.correct(vector, old, *exits,
                                    stages.newton.pieces, plan.layout,
                                    plan.relative)
    count = count + passes.astype(jnp.int64) * plan.pass_steps
  return vector, largest_change(vector, old, plan.relative), work, count


def exits(vector: jax.Array, stages: StageTables, roll: bellman.RollArrays,
          plan: StagePlan) -> tuple[jax.Array, jax.Array]:
  """How every key's turn ends under the policy `vector` implies: each
  sub-batch's turn pass with picks and its forward pass, every read from
  `vector` (no stage waits on another's values).

  Args:
    vector: [V] padded W0; stages, roll: tables; plan: sizes (plan.newton).

  Returns:
    The flat bank exits [plan.exit_size] (`newton.ExitTables`) and [V] the
    farkle exit of each key position.
  """
  def stage(s, exits):
    _, _, bank, farkle = _turn_starts(
        vector, 1 - vector[stages.farkle[s]], stages.bank_base[s],
        stages.top[s], stages.first[s], roll, plan)
    return _store_exits(exits, s, bank, farkle, stages, plan)

  return jax.lax.fori_loop(
      0, stages.keys.shape[0], stage,
      (jnp.zeros((plan.exit_size,), newton.EXIT_DTYPE),
       jnp.zeros_like(vector)))


def exit_steps(stages: StageTables) -> int:
  """Dependent loop steps of `exits`: the turn and forward passes of each
  sub-batch, one after the other."""
  return int(_map_steps(stages, 2).sum())


def largest_change(new: jax.Array, old: jax.Array, relative: bool
                   ) -> jax.Array:
  """The largest change of the real entries (all but the last, the sink),
  in the solve's norm (`change_norm`)."""
  return change_norm.largest(new[:-1], old[:-1], relative)


def default_b_group(layout: StateLayout) -> int:
  """Banked scores per sub-batch when the config leaves it at 0: CPUs like
  small sub-batches, accelerators one wide one per device."""
  if jax.default_backend() == "cpu":
    return 16
  return -(-layout.num_scores // jax.device_count())

