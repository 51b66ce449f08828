"""Value iteration over the full state array, the published method
(docs/model.md §4.1), kept as the baseline.

One sweep updates every state once: each chunk of keys runs the turn pass of
`bellman` from its highest turn total down, so every roll reads rows this
sweep already updated (a whole turn of look-ahead per sweep). Banking and
farkling read the start values W0 of the previous sweep.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman


class SweepTables(NamedTuple):
  """Device-resident index and weight tables of one sweep."""
  roll: bellman.RollArrays
  farkle_index: jax.Array  # [C, Kc] int32 flat W0 key after a farkle
  bank_base: jax.Array     # [C, Kc] int32 padded-vector bank position, t = 0
  top_row: jax.Array       # [C] int32 highest row each chunk needs


def build_tables(layout: StateLayout, roll: roll_tables.RollTables,
                 dtype=jnp.float64) -> SweepTables:
  """Puts the index tables of a rule set on the default device."""
  shape = (layout.num_chunks, layout.chunk_keys)
  return SweepTables(
      roll=bellman.roll_arrays(roll, dtype),
      farkle_index=jnp.asarray(layout.farkle_index().reshape(shape)),
      bank_base=jnp.asarray(layout.bank_base().reshape(shape)),
      top_row=jnp.asarray(layout.chunk_top_row()))


def sweep(values: jax.Array, w0: jax.Array, tables: SweepTables,
          layout: StateLayout, relative: bool
          ) -> tuple[jax.Array, jax.Array]:
  """One value-iteration sweep over every state.

  Args:
    values: [C, T + 1, 6, Kc] all state values (donate it: updated in place).
    w0: [B, D, F, E] the start-of-turn values of `values`, as a separate
      array (slicing them out of a donated `values` makes XLA copy it).
    tables: sweep tables.
    layout: the state layout (static).
    relative: residual |dW| / W instead of |dW| (static).

  Returns:
    The new values and the largest change of any state.
  """
  w0_flat, padded = w0.reshape(-1), layout.padded_start(w0, jnp)

  def chunk(c, carry):
    values, res = carry
    rows, r = bellman.turn_pass(
        values[c], 1 - w0_flat[tables.farkle_index[c]], padded,
        tables.bank_base[c], tables.top_row[c], tables.roll, layout, relative)
    return values.at[c].set(rows), jnp.maximum(res, r)

  return jax.lax.fori_loop(0, values.shape[0], chunk,
                           (values, jnp.zeros((), values.dtype)))


def loop_steps(tables: SweepTables) -> jax.Array:
  """[] int64 dependent loop steps of one sweep: the row loop of every
  chunk, one chunk after the other (a chunk without rows still a step)."""
  return jnp.maximum(tables.top_row + 1, 1).sum().astype(jnp.int64)


def initial_values(layout: StateLayout, init: float, dtype) -> jax.Array:
  """[C, T + 1, 6, Kc] start values: `init` everywhere, 1 where terminal.

  Built on the device from a [C, T + 1, 1, Kc] mask: no full-size host copy.
  """
  mask = jnp.asarray(layout.terminal_mask())
  fill = jax.jit(lambda m: jnp.broadcast_to(
      jnp.where(m, 1.0, init).astype(dtype), layout.value_shape))
  return fill(mask)
