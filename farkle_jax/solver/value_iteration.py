"""Value iteration over the full state array, the published method
(docs/model.md §4.1), kept as the baseline.

One sweep updates every state once: each chunk of keys runs the turn pass of
`bellman` from its highest turn total down, so every roll reads rows this
sweep already updated (a whole turn of look-ahead per sweep). Banking and
farkling read the start values W0 of the previous sweep. The chunks are
split over the devices of a mesh (`jax.shard_map`); each device holds its
chunks' values and all of W0.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman


class SweepTables(NamedTuple):
  """Device-resident index and weight tables of one sweep."""
  roll: bellman.RollArrays
  farkle_index: jax.Array  # [C', Kc] int32 flat W0 key after a farkle
  bank_base: jax.Array     # [C', Kc] int32 padded-vector bank position, t = 0
  top_row: jax.Array       # [C'] int32 highest row each chunk needs (-1:
                           #   a padding chunk, C' = C rounded up to a
                           #   multiple of the device count)


def padded_chunks(layout: StateLayout, devices: int) -> int:
  """C': the chunks rounded up to a multiple of the device count."""
  return -(-layout.num_chunks // devices) * devices


def build_tables(layout: StateLayout, roll: roll_tables.RollTables,
                 dtype=jnp.float64, devices: int = 1) -> SweepTables:
  """Puts the index tables of a rule set on the default device, padded to
  `padded_chunks` chunks (padding chunks have no rows to update)."""
  shape = (layout.num_chunks, layout.chunk_keys)
  pad = padded_chunks(layout, devices) - layout.num_chunks

  def padded(x, fill):
    return jnp.asarray(np.concatenate(
        [x, np.full((pad,) + x.shape[1:], fill, x.dtype)]))

  return SweepTables(
      roll=bellman.roll_arrays(roll, dtype),
      farkle_index=padded(layout.farkle_index().reshape(shape), 0),
      bank_base=padded(layout.bank_base().reshape(shape), 0),
      top_row=padded(layout.chunk_top_row(), -1))


def sweep(values: jax.Array, w0: jax.Array, tables: SweepTables,
          layout: StateLayout, relative: bool, mesh: Mesh
          ) -> tuple[jax.Array, jax.Array]:
  """One value-iteration sweep over every state.

  Args:
    values: [C', T + 1, 6, Kc] all state values (donate it: updated in
      place).
    w0: [B, D, F, E] the start-of-turn values of `values`, as a separate
      array (slicing them out of a donated `values` makes XLA copy it).
    tables: sweep tables.
    layout: the state layout (static).
    relative: residual |dW| / W instead of |dW| (static).
    mesh: devices over which the chunks are split (C' divides evenly).

  Returns:
    The new values and the largest change of any state.
  """
  def local(values, w0, farkle_index, bank_base, top_row, roll):
    w0_flat, padded = w0.reshape(-1), layout.padded_start(w0, jnp)

    def chunk(c, carry):
      values, res = carry
      rows, r = bellman.turn_pass(
          values[c], 1 - w0_flat[farkle_index[c]], padded, bank_base[c],
          top_row[c], roll, layout, relative)
      return values.at[c].set(rows), jnp.maximum(res, r)

    values, res = jax.lax.fori_loop(0, values.shape[0], chunk,
                                    (values, jnp.zeros((), values.dtype)))
    return values, jax.lax.pmax(res, "batch")

  split = P("batch")
  return jax.shard_map(
      local, mesh=mesh, in_specs=(split, P(), split, split, split, P()),
      out_specs=(split, P()), check_vma=False)(
          values, w0, tables.farkle_index, tables.bank_base, tables.top_row,
          tables.roll)


def loop_steps(tables: SweepTables, devices: int = 1) -> jax.Array:
  """[] int64 dependent loop steps of one sweep: the row loop of every
  chunk of a device, one chunk after the other (a chunk without rows still
  a step), on the device with the most."""
  steps = jnp.maximum(tables.top_row + 1, 1).reshape(devices, -1)
  return steps.sum(axis=1).max().astype(jnp.int64)


def initial_values(layout: StateLayout, init: float, dtype,
                   devices: int = 1) -> jax.Array:
  """[C', T + 1, 6, Kc] start values: `init` everywhere, 1 where terminal
  (padding chunks: all terminal).

  Built on the device from a [C', T + 1, 1, Kc] mask: no full-size host copy.
  """
  mask = layout.terminal_mask()
  pad = padded_chunks(layout, devices) - layout.num_chunks
  mask = jnp.asarray(np.concatenate(
      [mask, np.ones((pad,) + mask.shape[1:], bool)]))
  fill = jax.jit(lambda m: jnp.broadcast_to(
      jnp.where(m, 1.0, init).astype(dtype), (m.shape[0],) +
      layout.value_shape[1:]))
  return fill(mask)
