"""The ordered sweep of N players (docs/model.md §8).

As for two players, only the start vectors W0 [K + 1, N] are stored (row K: a
sink for padding) and every turn is rebuilt from them (`vector_pass`), stage
by stage in an order that makes the reads final:

* Banking raises the sum of all scores by at least the bank minimum, so
  keys are processed from the highest score sum down, in blocks of
  bank_min sums (`SeatsLayout.stage`).
* With a penalty, a farkle that does not cost it keeps the sum and raises
  the farkle-count sum: within a block the classes go highest first. The
  penalty farkle lowers the sum (or, at the floor, the class; with a
  penalty at every farkle, `penalty_count` 1, it may stay in the stage at
  or near the floor) and reads the value before the stage's update: such
  rules take several sweeps. A block's stages run together and its own
  farkle reads are then solved exactly (`penalty_blocks`).
* Without a penalty, a farkle rotates the key within its stage: the keys
  of a rotation cycle (length dividing N) depend on each other. With the
  turn policies fixed, each key is affine in its farkle target, with one
  scalar slope a_k for every component (the probability that the turn ends
  in a farkle): x_k = c_k + a_k * R(x_target), R the rotation of
  `SeatsLayout.from_next`. Going N times round the cycle gives
  x_k = C_k + A_k x_k, solved exactly. The stage repeats this (a policy
  step: the policies are re-chosen at the new values) until it changes
  its values by less than `NEWTON_ATOL`. Some cycles have no equilibrium
  in pure turn policies reachable from the first guess: there the policy
  steps alternate, and the stage keeps a midpoint and reports it
  (`stage_step`). The next sweep tries again from that midpoint; where it
  settles there, the stages below change and one more sweep confirms it.

A stage's keys are cut into sub-batches of G keys sorted by the mover's
score, each passed from its own highest row, so ragged turns cost little.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from farkle_jax.game.seats import SeatsLayout
from farkle_jax.game import roll_tables
from farkle_jax.solver import (bellman, change_norm, last_turns, placement,
                                vector_pass)
from farkle_jax.solver.bellman import RollArrays

NEWTON_STEPS = 8      # most policy steps of a stage per sweep
NEWTON_ATOL = 1e-14   # a stage's policy steps stop below this change


class SeatTables(NamedTuple):
  """The keys of every stage (stage-major, sub-batches of G keys)."""
  keys: jax.Array       # [S, U * G] int32 flat key (padding: the sink K)
  farkle: jax.Array     # [S, U * G] int32 flat key of the farkle target
  partner: jax.Array    # [S, U * G] int32 stage-local index of the farkle
                        #   target (itself when outside the stage)
  bank_base: jax.Array  # [S, U * G] int32 `SeatsLayout.bank_base`
  s0: jax.Array         # [S, U * G] int32 the mover's banked score
  top: jax.Array        # [S, U] int32 highest row of each sub-batch
  warm: jax.Array       # [S, U * G] int32 flat key of the same scores with
                        #   the last seat one bank minimum higher (a first
                        #   guess the block before solved), or the sink: 1/N
  chain: jax.Array      # [S, U * G] int32 block-local index (stage row
                        #   within the block * U * G + slot) of the farkle
                        #   target where it lies in the key's own block,
                        #   else -1 (`penalty_blocks`)
  first_farkle: jax.Array  # [S, U * G] int32 what the first sweep reads
                        #   for the farkle target: where it lies in a later
                        #   block, the key with its scores raised into the
                        #   block before (`SeatsLayout.raised_key`)
  final: jax.Array      # [P * B^(N-1), N] a bank at or past the goal
                        #   under the final round (`last_turns`; [1, N]
                        #   unused without one)
  real: jax.Array       # [S, U * G] bool not padding
  work: np.ndarray      # [S] the stage's share of all states (host)


class SeatPlan(NamedTuple):
  """Static sizes of the sweep (hashable: a jit constant)."""
  seats: SeatsLayout
  group: int       # keys per sub-batch, G
  batches: int     # sub-batches per stage, U
  cycles: bool     # farkles stay in the stage (no penalty): solve cycles
  relative: bool   # the change is |dW| / W instead of |dW|
  mesh: Mesh | None = None   # devices the sub-batches of a stage split over
  newton: bool = False       # under a penalty, record every turn's exits
                             #   and correct each sweep (`seat_newton`)


def table_shardings(tables: SeatTables, mesh: Mesh) -> SeatTables:
  """Where the tables live on `mesh`: the per-key tables split along
  their sub-batches (each device holds the sub-batches it passes), the
  final-round table and the stage shares whole on every device."""
  split = NamedSharding(mesh, P(None, "batch"))
  whole = NamedSharding(mesh, P())
  return tables._replace(
      **{f: split for f in tables._fields if f not in ("final", "work")},
      final=whole, work=whole)


def plan_sizes(seats: SeatsLayout, group: int = 2048, devices: int = 1
               ) -> tuple[int, int, int]:
  """(S, U, G) of `build`, from the sizes alone (for the memory estimate);
  U is a multiple of the number of devices."""
  sizes = seats.stage_sizes()
  S, most = len(sizes), int(sizes.max())
  G = min(group, most)
  U = -(-most // G)
  return S, -(-U // devices) * devices, G


def build(seats: SeatsLayout, group: int = 2048, relative: bool = False,
          mesh: Mesh | None = None, newton: bool = False
          ) -> tuple[SeatTables, SeatPlan]:
  """Stages, sub-batches and index tables of the sweep (the sub-batches of
  a stage split over the devices of `mesh`, if given; `newton`: the
  Newton step under a penalty, `SeatPlan.newton`)."""
  fields = seats.key_fields()
  stage = seats.stage(fields)
  s0 = np.asarray(fields[0])
  D = mesh.size if mesh is not None else 1
  S, U, G = plan_sizes(seats, group, D)
  order = np.lexsort((-s0, stage))   # by stage, longest turns first
  stage_o, s0_o = stage[order], s0[order]
  start = np.searchsorted(stage_o, np.arange(S))
  slot = column(np.arange(len(order)) - start[stage_o], G, U, D)
  sink = seats.num_keys
  keys = np.full((S, U * G), sink, np.int64)
  keys[stage_o, slot] = order
  farkle = np.full((S, U * G), sink, np.int64)
  farkle[stage_o, slot] = seats.key_index(seats.farkle_fields(fields))[order]
  bank = np.full((S, U * G), sink, np.int64)
  bank[stage_o, slot] = seats.bank_base(fields)[order]
  mover = np.full((S, U * G), seats.num_scores - 1, np.int64)
  mover[stage_o, slot] = s0_o
  top = np.full((S, U), -1, np.int64)
  np.maximum.at(top, (stage_o, slot // G), seats.t_max(s0_o))
  # One bank minimum higher: the block before, so solved earlier in every
  # sweep (one unit could stay in this block when the bank minimum is more).
  last, up = np.asarray(fields[seats.players - 1]), seats.bank_min
  near = np.where(last + up < seats.num_scores,
                  np.arange(seats.num_keys) + up * seats.score_stride, sink)
  warm = np.full((S, U * G), sink, np.int64)
  warm[stage_o, slot] = near[order]
  local = np.full(sink + 1, -1, np.int64)
  local[order] = slot
  partner = np.broadcast_to(np.arange(U * G), (S, U * G)).copy()
  inside = (keys < sink) & (stage[np.minimum(farkle, sink - 1)]
                            == np.arange(S)[:, None])
  partner[inside] = local[farkle[inside]]
  # Under a penalty a farkle into the key's own block is solved with the
  # block (`penalty_blocks`); only where every farkle costs it
  # (penalty_count 1) can one at or near the floor stay in the stage.
  cycles = seats.penalty == 0
  if not cycles and seats.num_farkle > 1 and inside.any():
    raise AssertionError("a same-stage farkle under a penalty")
  chain, first = _block_reads(seats, fields, stage, keys, farkle, local)
  hand = np.asarray(fields[seats.players])[order]   # the mover's field
  states = np.zeros(S)
  np.add.at(states, stage_o,
            (seats.t_max(s0_o) + 1) * seats.own_states(hand))
  tables = SeatTables(
      *(placement.on_device(x, np.int32)
        for x in (keys, farkle, partner, bank, mover, top, warm, chain,
                  first)),
      final=placement.on_device(_final(seats)),
      real=placement.on_device(keys < sink),
      work=states / states.sum())
  return tables, SeatPlan(seats, G, U, cycles, relative, mesh,
                          newton and not cycles)


def column(slot: np.ndarray, group: int, batches: int, devices: int
           ) -> np.ndarray:
  """The column of a stage's `slot`-th key (keys sorted by the mover's
  score, longest turns first): sub-batch u of the sorted order goes to
  device u mod D, so every device passes its share of long and short
  turns (a device holds U / D contiguous sub-batches of the columns)."""
  u, within = np.divmod(slot, group)
  return ((u % devices) * (batches // devices) + u // devices) * group + within


def _final(seats: SeatsLayout) -> np.ndarray:
  """`SeatTables.final` (the roll tables only where a final round reads
  them)."""
  roll = (bellman.roll_arrays(roll_tables.build(seats.rules))
          if seats.past_goal else None)
  return last_turns.final_values(seats, roll)


def _block_reads(seats: SeatsLayout, fields, stage: np.ndarray,
                 keys: np.ndarray, farkle: np.ndarray, local: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
  """`SeatTables.chain` and `.first_farkle` of the keys [S, M]."""
  per, sink, M = seats.stages_per_block, seats.num_keys, keys.shape[1]
  real = keys < sink
  row_block = np.arange(keys.shape[0])[:, None] // per
  target_stage = stage[np.minimum(farkle, sink - 1)]
  chain = np.full(keys.shape, -1, np.int64)
  same = real & (target_stage // per == row_block)
  chain[same] = (target_stage[same] % per) * M + local[farkle[same]]
  later = real & (target_stage // per > row_block)
  first = farkle.copy()
  if later.any():
    reader = seats.key_fields(keys[later])
    raised = seats.raised_key(reader, seats.farkle_fields(reader))
    first[later] = np.where(raised >= 0, raised, farkle[later])
  return chain, first


def values_shape(seats: SeatsLayout) -> tuple[int, int]:
  """(K + 1, N): the start vectors of every key and the sink's row."""
  return seats.num_keys + 1, seats.players


def initial_values(seats: SeatsLayout, dtype=jnp.float64) -> jax.Array:
  """[K + 1, N] the first guess: every player 1/N."""
  return jnp.full(values_shape(seats), 1 / seats.players, dtype)


def stage_pass(w0: jax.Array, tables: SeatTables, s: jax.Array,
               roll: RollArrays, plan: SeatPlan,
               farkle: jax.Array | None = None, exits: bool = False):
  """[C, U * G] start vectors of a stage's turns at the current w0, the
  sub-batches split over the devices of `plan.mesh`; `farkle` [U * G]:
  the keys its farkles read (default `tables.farkle[s]`); with `exits`,
  also [T + 1, U * G] the probability that each turn banks at t
  (`vector_pass.turn_exits`)."""
  G, U, C = plan.group, plan.batches, plan.seats.players + 1
  T1 = plan.seats.num_rows + 1

  def local(w0, farkle, base, s0, top, roll, final):  # [U / devices, G]
    final = final if plan.seats.past_goal else None

    def one(u, out):
      # Most of a stage's sub-batches only pad it to the largest (top -1):
      # passed over, as the picks and the mix would read them whole.
      return jax.lax.cond(top[u] >= 0, lambda: live(u, out), lambda: out)

    def live(u, out):
      start = (plan.seats.start_of_base(base[u], jnp) - 1
               if plan.seats.rules.hands else None)   # each mover's hand
      batch = vector_pass.Batch(
          farkle=vector_pass.farkle_values(w0, farkle[u], plan.seats),
          bank_base=base[u], s0=s0[u], top=top[u], final=final,
          start=start)
      e = vector_pass.turn_exits(w0, batch, roll, plan.seats)
      if not exits:
        return jax.lax.dynamic_update_index_in_dim(out, e.value, u, axis=0)
      return tuple(jax.lax.dynamic_update_index_in_dim(o, x, u, axis=0)
                   for o, x in zip(out, (e.value, e.bank)))
    out = jnp.zeros((farkle.shape[0], C, G), w0.dtype)
    if exits:
      out = (out, jnp.zeros((farkle.shape[0], T1, G), w0.dtype))
    return jax.lax.fori_loop(0, farkle.shape[0], one, out)

  farkle = tables.farkle[s] if farkle is None else farkle
  parts = [x.reshape(U, G) for x in (farkle, tables.bank_base[s],
                                     tables.s0[s])]
  if plan.mesh is not None:
    local = jax.shard_map(
        local, mesh=plan.mesh, check_vma=False,
        out_specs=(P("batch"),) * 2 if exits else P("batch"),
        in_specs=(P(), P("batch"), P("batch"), P("batch"), P("batch"), P(),
                  P()))
  out = local(w0, *parts, tables.top[s], roll, tables.final)    # [U, C, G]
  if not exits:
    return _columns(out)
  return _columns(out[0]), _columns(out[1])


def _columns(x: jax.Array) -> jax.Array:
  """[U, X, G] per sub-batch -> [X, U * G] per key."""
  return x.transpose(1, 0, 2).reshape(x.shape[1], -1)


def solve_cycles(c: jax.Array, a: jax.Array, partner: jax.Array,
                 players: int) -> jax.Array:
  """Solves x_k = c_k + a_k * R(x_partner(k)) for every k exactly.

  Args:
    c: [N, M] constant parts; a: [M] slopes (< 1 round every cycle);
    partner: [M] int32 the key each key's value reads (a permutation whose
      cycles have lengths dividing N).

  Returns:
    [N, M] the solution.
  """
  total, slope, j = c, a, partner
  for step in range(1, players):
    total = total + slope[None] * jnp.roll(c[:, j], step, axis=0)
    slope = slope * a[j]
    j = partner[j]
  return total / (1 - slope)[None]


class _Models(NamedTuple):
  """A stage's keys as affine maps x_k = c_k + a_k * R(x_target) under the
  turn policies chosen at some values."""
  c: jax.Array  # [N, M] constant part
  a: jax.Array  # [M] slope: the probability that the turn ends in a farkle


def _models(w0: jax.Array, tables: SeatTables, s: jax.Array,
            roll: RollArrays, plan: SeatPlan) -> _Models:
  """The affine maps of stage s under the policies optimal at w0 (exact:
  for fixed policies a turn is affine in what a farkle is worth)."""
  n = plan.seats.players
  v = stage_pass(w0, tables, s, roll, plan)
  read = plan.seats.from_next(w0[tables.farkle[s]].T, jnp)
  return _Models(v[:n] - v[n][None] * read, v[n])


def first_guess(w0: jax.Array, tables: SeatTables, s: jax.Array,
                 players: int) -> jax.Array:
  """w0 with stage s at the first sweep's guess: the warm keys, or 1/N."""
  warm, sink = tables.warm[s], w0.shape[0] - 1
  return w0.at[tables.keys[s]].set(
      jnp.where((warm == sink)[:, None], 1 / players, w0[warm]))


def _settle(w0: jax.Array, tables: SeatTables, s: jax.Array,
            roll: RollArrays, plan: SeatPlan) -> tuple[jax.Array, ...]:
  """Policy steps of stage s until its values change by less than
  `NEWTON_ATOL`, at most `NEWTON_STEPS`, or until
  they repeat the values of two steps before: the steps then alternate
  between two policy profiles, and more of them would only repeat those.

  Returns:
    w0, the steps taken, the last change, the values before the last step.
  """
  keys, real = tables.keys[s], tables.real[s]
  gap = lambda x, y: jnp.where(real[None], jnp.abs(x - y), 0).max()

  def step(carry):
    w0, i, _, before, _ = carry
    m = _models(w0, tables, s, roll, plan)
    x = vector_pass.sum_closed(
        solve_cycles(m.c, m.a, tables.partner[s], plan.seats.players))
    prev = w0[keys].T
    return (w0.at[keys].set(x.T), i + 1, gap(x, prev), prev,
            gap(x, before))

  def more(carry):
    _, i, change, _, repeat = carry
    return ((i < NEWTON_STEPS) & (change >= NEWTON_ATOL)
            & (repeat >= NEWTON_ATOL))

  inf = jnp.asarray(jnp.inf, w0.dtype)
  w0, i, change, prev, _ = jax.lax.while_loop(more, step, (
      w0, jnp.zeros((), jnp.int32), inf, w0[keys].T + inf, inf))
  return w0, i, change, prev


def stage_step(w0: jax.Array, tables: SeatTables, s: jax.Array,
               first: jax.Array, roll: RollArrays, plan: SeatPlan
               ) -> tuple[jax.Array, ...]:
  """Solves stage s of rules without a penalty in place (under one, a
  block at a time: `penalty_blocks.block_step`).

  Policy steps (each a turn pass of the stage and an exact cycle solve)
  run until the values change by less than `NEWTON_ATOL`, at most
  `NEWTON_STEPS` (an even number). Where they keep alternating between two
  policy profiles (seen as a repeat of the values two steps before, or
  still moving after `NEWTON_STEPS`), some rotation cycle has no
  equilibrium in pure turn policies (docs/model.md §8): the stage keeps the
  midpoint of the last two steps and reports how far apart they were. A
  later sweep runs the steps from the values kept; where they do not settle
  there, it starts the stage over from the first sweep's guess, so it lands
  where it landed then.

  Args:
    first: [] bool, the first sweep: the stage starts from `tables.warm`.

  Returns:
    w0 [K + 1, N] updated; the largest change of the stage's values (or
    relative change) since the call; the turn passes it took; the number of
    keys left unsettled; their largest distance between the last two steps.
  """
  keys, real = tables.keys[s], tables.real[s]
  before = w0[keys].T                                       # [N, M]
  guess = lambda w0: first_guess(w0, tables, s, plan.seats.players)
  settle = lambda w0: _settle(w0, tables, s, roll, plan)
  w0 = jax.lax.cond(first, guess, lambda w0: w0, w0)
  w0, steps, change, prev = settle(w0)
  # An unsettled stage starts again from the first sweep's guess, so that
  # its values depend on the stages before it alone, as in the first sweep.
  retry = ~first & (change >= NEWTON_ATOL)
  w0, again, change, prev = jax.lax.cond(
      retry, lambda w0: settle(guess(w0)),
      lambda w0: (w0, jnp.zeros((), jnp.int32), change, prev), w0)
  steps = steps + again
  last = w0[keys].T
  apart = jnp.where(real[None], jnp.abs(last - prev), 0).max(axis=0)
  open_ = apart >= NEWTON_ATOL
  w0 = w0.at[keys].set(jnp.where(open_[None], (last + prev) / 2, last).T)
  return (w0, largest_change(w0[keys].T, before, real, plan.relative),
          steps, jnp.sum(open_).astype(jnp.int32),
          jnp.where(open_, apart, 0).max())


def largest_change(after: jax.Array, before: jax.Array, real: jax.Array,
                   relative: bool) -> jax.Array:
  """[] the largest change of a stage's or block's values ([N, M] each;
  `real` [M] masks padding), relative to the new values if `relative`."""
  return change_norm.largest(after, before, relative, real[None])


compiled_stage_step = jax.jit(stage_step, static_argnames=("plan",),
                              donate_argnums=(0,))


def start_values(w0: jax.Array, seats: SeatsLayout) -> np.ndarray:
  """[B, .., B, F, .., F, N] the start vectors of every key (host)."""
  return np.asarray(w0[:-1]).reshape(seats.key_shape + (seats.players,))
