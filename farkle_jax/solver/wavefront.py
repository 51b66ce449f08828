"""The GPU-shaped solve: every key's turn pass at once, as a wavefront.

The ordered method (docs/model.md §4.2) walks 400-odd stages one after the
other, each a backward pass over t: tens of thousands of small dependent loop
steps per sweep, which suit a CPU and leave an accelerator waiting on loop
control. This method (docs/model.md §4.3) keeps the ordered method's
dependencies and runs them as one loop of a few hundred large steps:

* Keys of score sum s (index units) finish their turn pass (reach row t = 0)
  at step `finish(s) = x + x // bank_min` with x = the largest sum - s, and
  process row t at step finish(s) - t. Banking t >= bank_min from sum s reads
  the start value of sum s + t, which finished at a step before
  finish(s) - t, so every bank read is final for this sweep, as in the
  ordered method.
* A farkle leads to the same sum (read at its value before this sweep) or,
  after the penalty, to a lower sum (read at its previous value, as in the
  ordered method). Each key carries the slope of its values in its farkle
  value (a JVP of the row step); when a sum finishes, its start values are
  solved together with their same-sum farkle targets (pointer doubling on
  the affine models), which is exact when the policy does not change.
* Every step processes one row of every live key. Keys run in *slots* that
  are reused once a key is done, and each slot keeps only the last
  `ring_rows` rows of its key (a roll gains at most ring_rows - 1 units), so
  memory is [slots, ring_rows, 6], not the full value array.

One sweep costs one evaluation of every model state and `steps` dependent
loop steps (about 600 for facebook at L = -2500, against about 80,000 for
the ordered method).
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.solver import bellman


class WaveTables(NamedTuple):
  """Schedule and per-key index tables of the wavefront (device arrays)."""
  slot_keys: jax.Array   # [A, L] int32 keys a slot runs, in order (pad: K)
  finish: jax.Array      # [K + 1] int32 step at which the key reaches t = 0
  t_max: jax.Array       # [K + 1] int32 highest non-terminal row of the key
  position: jax.Array    # [K + 1] int32 padded-vector position (pad: sink)
  farkle: jax.Array      # [K + 1] int32 padded position of the farkle target
  bank_base: jax.Array   # [K + 1] int32 padded bank position at t = 0
  group_keys: jax.Array  # [N, G] int32 keys finishing at each step (pad: K)
  group_slots: jax.Array  # [N, G] int32 their slots
  partner: jax.Array     # [N, G] int32 group index of the farkle target, -1


class WavePlan(NamedTuple):
  """Static sizes of the wavefront (hashable: a jit constant)."""
  layout: StateLayout
  relative: bool   # residual |dW| / W instead of |dW|
  steps: int       # N, dependent steps of one sweep
  ring_rows: int   # rows each slot keeps
  rounds: int      # pointer-doubling rounds of a finishing group


def finish_steps(layout: StateLayout) -> tuple[np.ndarray, np.ndarray]:
  """[K] step at which each key finishes and [K] step at which it starts.

  Steps are shifted so that the first key starts at step 0.
  """
  b, d, _, _ = layout.key_fields()
  x = 2 * (layout.num_scores - 1) - (b + d)
  finish = x + x // layout.bank_min
  start = finish - layout.t_max(b)
  return finish - start.min(), start - start.min()


def assign_slots(start: np.ndarray, finish: np.ndarray) -> list[list[int]]:
  """Keys per slot: each slot runs keys whose steps do not overlap, and no
  more slots are used than keys are live at once (greedy interval
  partitioning by start step)."""
  free: list[tuple[int, int]] = []  # (finish step of its last key, slot)
  slots: list[list[int]] = []
  for k in np.lexsort((finish, start)):
    if free and free[0][0] < start[k]:
      _, a = heapq.heappop(free)
    else:
      a = len(slots)
      slots.append([])
    slots[a].append(int(k))
    heapq.heappush(free, (int(finish[k]), a))
  return slots


def slot_count(layout: StateLayout) -> int:
  """Slots the wavefront of `layout` needs (most keys live at one step)."""
  finish, start = finish_steps(layout)
  live = np.zeros(int(finish.max()) + 2, np.int64)
  np.add.at(live, start, 1)
  np.add.at(live, finish + 1, -1)
  return int(np.cumsum(live).max())


def ring_rows(roll: bellman.RollArrays) -> int:
  """Rows a slot keeps: the largest gain of one roll, in units, plus one."""
  most = max(int(np.asarray(g.rows).max()) for g in roll.groups)
  return StateLayout.row_of(most) + 1


def _doubling_rounds(partner: np.ndarray) -> int:
  """Rounds that take every node of the same-sum farkle graphs to the end
  of its chain or onto its cycle."""
  longest = max(1, int((partner >= 0).sum(axis=1).max()))
  return max(1, int(np.ceil(np.log2(longest))) + 1)


def build(layout: StateLayout, roll: bellman.RollArrays, relative: bool
          ) -> tuple[WaveTables, WavePlan]:
  """The schedule and index tables of the wavefront for one rule set."""
  K = layout.num_keys
  finish, start = finish_steps(layout)
  slots = assign_slots(start, finish)
  slot_keys = np.full((len(slots), max(map(len, slots)) + 1), K, np.int64)
  for a, keys in enumerate(slots):
    slot_keys[a, :len(keys)] = keys
  slot_of = np.zeros(K, np.int64)
  for a, keys in enumerate(slots):
    slot_of[keys] = a

  fields = layout.key_fields()
  sink = layout.sink

  def padded(values, pad):
    return np.append(np.asarray(values, np.int64), pad)

  steps = int(finish.max()) + 1
  order = np.argsort(finish, kind="stable")
  cut = np.searchsorted(finish[order], np.arange(steps + 1))
  G = int(np.diff(cut).max())
  group_keys = np.full((steps, G), K, np.int64)
  partner = np.full((steps, G), -1, np.int64)
  local = np.full(K + 1, -1, np.int64)
  farkle_key = layout.key_index(*layout.farkle_fields(fields))
  for s in range(steps):
    keys = order[cut[s]:cut[s + 1]]
    group_keys[s, :len(keys)] = keys
    local[keys] = np.arange(len(keys))
    partner[s, :len(keys)] = local[farkle_key[keys]]
    local[keys] = -1
  slot_pad = np.append(slot_of, 0)
  tables = WaveTables(
      slot_keys=slot_keys,
      finish=padded(finish, -1),
      t_max=padded(layout.t_max(fields[0]), -1),
      position=padded(layout.padded_index(*fields), sink),
      farkle=padded(layout.padded_index(*layout.farkle_fields(fields)), sink),
      bank_base=padded(layout.bank_base(fields), sink),
      group_keys=group_keys, group_slots=slot_pad[group_keys],
      partner=partner)
  plan = WavePlan(layout, relative, steps, ring_rows(roll),
                  _doubling_rounds(partner))
  return WaveTables(*(jnp.asarray(x, jnp.int32) for x in tables)), plan


def _row_step(ring, x_farkle, t, tmax, bank, roll: bellman.RollArrays,
              layout: StateLayout, rows: int):
  """New values [A, 6] of row t of every slot from its ring [A, rows * 6].

  Args:
    ring: [A, rows * 6] the slot's last rows, row r at r mod rows.
    x_farkle: [A] value of a farkle (1 - W0 of the farkle target).
    t: [A] int32 row each slot processes; tmax: [A] its key's last row.
    bank: [A] value of banking t (-inf where banking is not allowed).
  """
  best = []
  for g in roll.groups:
    gain = StateLayout.row_of(g.rows)                    # [R_j, j]
    col = g.rows - StateLayout.turn_offset(gain, 1)
    reach = t[:, None, None] + gain[None]                # [A, R_j, j]
    idx = StateLayout.turn_offset(reach % rows, col[None] + 1)
    got = jnp.take_along_axis(ring, idx.reshape(len(t), -1), axis=1)
    got = jnp.where(reach > tmax[:, None, None], 1.0,
                    got.reshape(reach.shape))
    best.append(got.max(axis=-1))                        # [A, R_j]
  best = jnp.concatenate(best, axis=1)                   # [A, R]
  value = (jnp.dot(best, roll.set_weight.T,
                   precision=jax.lax.Precision.HIGHEST)
           + x_farkle[:, None] * roll.farkle_prob[None, :])
  return jnp.maximum(value, bank[:, None])


def _finish_group(vector, step, new, slope, tables: WaveTables,
                  plan: WavePlan):
  """Solves and writes the start values of the keys finishing at `step`."""
  keys = tables.group_keys[step]                         # [G]
  slots = tables.group_slots[step]
  value = new[slots, N_DICE - 1]
  s = slope[slots, N_DICE - 1]
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


def sweep(vector: jax.Array, tables: WaveTables, roll: bellman.RollArrays,
          plan: WavePlan, mesh: Mesh | None = None
          ) -> tuple[jax.Array, jax.Array]:
  """One wavefront sweep: every key's turn pass, `plan.steps` steps.

  Args:
    vector: [V] padded W0 (donate it).
    tables: schedule and index tables; roll: roll tables; plan: sizes.
    mesh: devices over which the slots are split (XLA places the
      exchanges: each step's finishing keys read their slots' new rows).

  Returns:
    The new vector and the largest change of any start value (absolute or
    relative as configured).
  """
  layout, rows = plan.layout, plan.ring_rows
  A = tables.slot_keys.shape[0]
  slot_index = jnp.arange(A)
  write = StateLayout.turn_offset(0, jnp.arange(1, N_DICE + 1))  # [6]

  def split(x):
    if mesh is None or mesh.size == 1:
      return x
    return jax.lax.with_sharding_constraint(
        x, NamedSharding(mesh, P("batch", *(None,) * (x.ndim - 1))))

  def step(tau, carry):
    vector, ring, tangent, pointer = carry
    ring, tangent, pointer = split(ring), split(tangent), split(pointer)
    key = tables.slot_keys[slot_index, pointer]
    done = tables.finish[key] < tau
    pointer = jnp.minimum(pointer + done, tables.slot_keys.shape[1] - 1)
    key = tables.slot_keys[slot_index, pointer]
    t = tables.finish[key] - tau
    tmax = tables.t_max[key]
    x_farkle = 1 - vector[tables.farkle[key]]
    base = tables.bank_base[key]
    bank = jnp.where(t >= layout.bank_floor_at(base, jnp),
                     1 - vector[layout.bank_position(base, jnp.maximum(t, 0),
                                                     jnp)],
                     -jnp.inf)
    new, slope = jax.jvp(
        lambda ring, x: _row_step(ring, x, t, tmax, bank, roll, layout, rows),
        (ring, x_farkle), (tangent, jnp.ones_like(x_farkle)))
    at = (jnp.maximum(t, 0) % rows * N_DICE)[:, None] + write[None]
    ring = ring.at[slot_index[:, None], at].set(new)
    tangent = tangent.at[slot_index[:, None], at].set(slope)
    vector = _finish_group(vector, tau, new, slope, tables, plan)
    return vector, ring, tangent, pointer

  old = vector
  ring = split(jnp.zeros((A, rows * N_DICE), vector.dtype))
  vector, *_ = jax.lax.fori_loop(
      0, plan.steps, step,
      (vector, ring, split(jnp.zeros_like(ring)),
       split(jnp.zeros((A,), jnp.int32))))
  delta = jnp.abs(vector - old)[:-1]
  if plan.relative:
    delta = delta / jnp.maximum(vector[:-1], jnp.finfo(vector.dtype).tiny)
  return vector, delta.max()
