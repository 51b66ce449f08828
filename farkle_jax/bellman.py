"""The Bellman update of the win-probability model (model.md §2).

One *sweep* updates every state once. Within a turn t only grows, so a sweep
walks each key's rows from the highest turn total down to 0 and every roll
reads rows that this sweep already updated (a whole turn of look-ahead per
sweep, as in the published solver). Banking and farkling leave the turn; their
values come from the start-of-turn values W0 of the previous sweep.

    roll(t, n) = P_farkle(n) * (1 - W0[farkle key])
               + sum_r p(r) * max_j W(t + pts[r, j], next[r, j])
    W(t, n)    = max(roll(t, n), 1 - W0[d, b + t, e, 0])  if t >= bank minimum
               = roll(t, n)                               otherwise

Rows beyond the last one are terminal (value 1). Everything is a gather over
the precomputed index tables of `tables` and `layout`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax import tables as tables_lib
from farkle_jax.layout import N_DICE, StateLayout


class OptionGroup(NamedTuple):
  """Score sets that offer the same number of options j."""
  rows: jax.Array  # [R_j, j] int32, row offset t*6 + n - 1 of each option


class RollArrays(NamedTuple):
  """Device-resident roll tables (independent of the keys)."""
  groups: tuple[OptionGroup, ...]  # option gathers, grouped by option count
  set_weight: jax.Array   # [6, R] probability of score set r for n dice
  farkle_prob: jax.Array  # [6]


class SweepTables(NamedTuple):
  """Device-resident index and weight tables of one sweep."""
  roll: RollArrays
  farkle_index: jax.Array  # [C, Kc] int32 flat W0 key after a farkle
  bank_base: jax.Array     # [C, Kc] int32 flat padded-W0 index at t = 0
  top_row: jax.Array       # [C] int32 highest row each chunk needs


class Sweep(NamedTuple):
  """Static sizes of a sweep (hashable; jit treats it as a constant)."""
  num_rows: int      # T
  bank_min: int      # smallest bankable turn total, units
  key_shape: tuple[int, int, int, int]
  bank_pad: int      # zero columns appended to W0's d axis
  relative: bool     # residual |dW| / W instead of |dW|


def roll_arrays(roll: tables_lib.RollTables, dtype=jnp.float64) -> RollArrays:
  """Puts the roll tables on the default device, options grouped by count."""
  pts, nxt = roll.opt_pts, roll.opt_next
  counts = np.array([len(set(zip(p, q))) for p, q in zip(pts, nxt)])
  order = np.argsort(counts, kind="stable")
  groups = []
  for j in sorted(set(counts)):
    sel = order[counts[order] == j]
    rows = np.zeros((len(sel), j), np.int32)
    for i, r in enumerate(sel):
      uniq = list(dict.fromkeys(zip(pts[r], nxt[r])))
      rows[i] = [p * N_DICE + q - 1 for p, q in uniq]
    groups.append(OptionGroup(rows=jnp.asarray(rows)))
  weight = np.zeros((N_DICE, len(order)))
  for col, r in enumerate(order):
    weight[roll.set_dice[r] - 1, col] = roll.set_prob[r]
  return RollArrays(groups=tuple(groups),
                    set_weight=jnp.asarray(weight, dtype),
                    farkle_prob=jnp.asarray(roll.farkle_prob, dtype))


def build(layout: StateLayout, roll: tables_lib.RollTables,
          dtype=jnp.float64) -> SweepTables:
  """Puts the index tables of a rule set on the default device."""
  shape = (layout.num_chunks, layout.chunk_keys)
  return SweepTables(
      roll=roll_arrays(roll, dtype),
      farkle_index=jnp.asarray(layout.farkle_index().reshape(shape)),
      bank_base=jnp.asarray(layout.bank_base().reshape(shape)),
      top_row=jnp.asarray(layout.chunk_top_row()))


def sweep_config(layout: StateLayout, relative: bool) -> Sweep:
  return Sweep(num_rows=layout.num_rows, bank_min=layout.bank_min,
               key_shape=layout.key_shape, bank_pad=layout.bank_padding(),
               relative=relative)


def start_values(values: jax.Array, cfg: Sweep) -> jax.Array:
  """W0 [B, D, F, E] from the full values [C, T + 1, 6, Kc]."""
  flat = values[:, 0, N_DICE - 1, :].reshape(-1)
  return flat[:int(np.prod(cfg.key_shape))].reshape(cfg.key_shape)


def padded_start(w0: jax.Array, cfg: Sweep) -> jax.Array:
  """W0 with zero columns on the d axis, flattened (for bank lookups)."""
  return jnp.pad(w0, ((0, 0), (0, cfg.bank_pad), (0, 0), (0, 0))).reshape(-1)


def turn_rows(rows: jax.Array, x_farkle: jax.Array, w0_bank: jax.Array,
              bank_base: jax.Array, top: jax.Array,
              roll: RollArrays, cfg: Sweep) -> tuple[jax.Array, jax.Array]:
  """Backward pass over the turn of one chunk of keys.

  Args:
    rows: [T + 1, 6, Kc] values of the chunk (row T: terminal ones).
    x_farkle: [Kc] value of a farkle, 1 - W0 of the opponent's next key.
    w0_bank: [B * (D + pad) * F * E] padded start values (bank lookups).
    bank_base: [Kc] int32.
    top: [] int32, the highest row to update.
    roll: roll tables.
    cfg: static sizes.

  Returns:
    The updated rows [T + 1, 6, Kc] and the largest change (absolute or
    relative, per `cfg.relative`) of any updated entry.
  """
  T = cfg.num_rows
  kc = rows.shape[-1]
  fe = cfg.key_shape[2] * cfg.key_shape[3]
  farkle_term = roll.farkle_prob[:, None] * x_farkle[None]

  def body(i, carry):
    rows, res = carry
    t = top - i
    flat = rows.reshape((T + 1) * N_DICE, kc)
    best = []
    for g in roll.groups:
      # Rows past the table are terminal: clamp to the row of ones.
      idx = jnp.minimum(g.rows + t * N_DICE, T * N_DICE + g.rows % N_DICE)
      best.append(flat[idx].max(axis=1))          # [R_j, Kc]
    best = jnp.concatenate(best, axis=0)           # [R, Kc]
    value = jnp.dot(roll.set_weight, best,
                   precision=jax.lax.Precision.HIGHEST) + farkle_term
    bank = jnp.where(t >= cfg.bank_min,
                     1 - w0_bank[bank_base + t * fe], 0.0)
    new = jnp.maximum(value, bank[None, :])         # [6, Kc]
    old = jax.lax.dynamic_index_in_dim(rows, t, keepdims=False)
    delta = jnp.abs(new - old)
    if cfg.relative:
      delta = delta / jnp.maximum(new, jnp.finfo(new.dtype).tiny)
    rows = jax.lax.dynamic_update_index_in_dim(rows, new, t, axis=0)
    return rows, jnp.maximum(res, delta.max())

  return jax.lax.fori_loop(0, top + 1, body,
                           (rows, jnp.zeros((), rows.dtype)))


def sweep(values: jax.Array, w0: jax.Array, tabs: SweepTables, cfg: Sweep
          ) -> tuple[jax.Array, jax.Array]:
  """One value-iteration sweep over every state.

  Args:
    values: [C, T + 1, 6, Kc] all state values (donate it: updated in place).
    w0: [B, D, F, E] the start-of-turn values of `values`, as a separate
      array (slicing them out of a donated `values` makes XLA copy it).
    tabs: sweep tables.
    cfg: static sizes.

  Returns:
    The new values and the largest change of any state.
  """
  w0_flat, w0_bank = w0.reshape(-1), padded_start(w0, cfg)

  def chunk(c, carry):
    values, res = carry
    rows, r = turn_rows(values[c], 1 - w0_flat[tabs.farkle_index[c]], w0_bank,
                        tabs.bank_base[c], tabs.top_row[c], tabs.roll, cfg)
    return values.at[c].set(rows), jnp.maximum(res, r)

  return jax.lax.fori_loop(0, values.shape[0], chunk,
                           (values, jnp.zeros((), values.dtype)))


def initial_values(layout: StateLayout, init: float, dtype) -> jax.Array:
  """[C, T + 1, 6, Kc] start values: `init` everywhere, 1 where terminal.

  Built on the device from a [C, T + 1, 1, Kc] mask: no full-size host copy.
  """
  mask = jnp.asarray(layout.terminal_mask())
  fill = jax.jit(lambda m: jnp.broadcast_to(
      jnp.where(m, 1.0, init).astype(dtype), layout.value_shape))
  return fill(mask)


def turn_values(w0: jax.Array, keys: jax.Array, layout: StateLayout,
                tabs_all: tables_lib.RollTables) -> np.ndarray:
  """Every in-turn value of some keys, rebuilt from the start values.

  Args:
    w0: [B, D, F, E] converged start-of-turn values.
    keys: [k] flat keys.
    layout: the state layout of the run.
    tabs_all: roll tables of the rules.

  Returns:
    [T + 1, 6, k] values (row T: terminal ones).
  """
  keys = np.asarray(keys)
  fields = np.unravel_index(keys, layout.key_shape)
  cfg = sweep_config(layout, relative=False)
  rows = np.ones((layout.num_rows + 1, N_DICE, len(keys)), w0.dtype)
  w0 = jnp.asarray(w0)
  out, _ = jax.jit(turn_rows, static_argnames="cfg")(
      jnp.asarray(rows), 1 - w0.reshape(-1)[layout.farkle_index(fields)],
      padded_start(w0, cfg), jnp.asarray(layout.bank_base(fields)),
      jnp.asarray(int(layout.t_max(fields[0]).max()), jnp.int32),
      roll_arrays(tabs_all, w0.dtype), cfg=cfg)
  return np.asarray(out)
