"""Where a wavefront column lives when the columns split over devices.

A chunk is C consecutive columns, [jC, (j + 1)C). On one device a
column-indexed array (the rings, the pointers) is `[..., W]` and a chunk
a slice of its last axis. Split over D devices it is `[..., D, W / D]`,
device d holding block d, and chunk j takes C / D columns of every block:
column jC + d C/D + l lives in block d at jC/D + l. A chunk's step then
slices an axis that is not split, and XLA's partitioner keeps its reads
and writes on each device (`experiments/collectives.py --layouts`); only
the reads at scattered columns (a finishing group's, a move's) cross
devices. Chunks split evenly: C is a multiple of D tiles
(`wavefront.build`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def starts(*index) -> tuple[jax.Array, ...]:
  """Start indices of one integer type (loop counters may be int64)."""
  return tuple(jnp.asarray(i, jnp.int32) for i in index)


def column_split(mesh: Mesh | None):
  """x -> x placed with its last axis (columns, a chunk's [..., C]) split
  over `mesh` (x as it is on one device or none)."""
  def place(x):
    if mesh is None or mesh.size == 1:
      return x
    return jax.lax.with_sharding_constraint(
        x, NamedSharding(mesh, P(*(None,) * (x.ndim - 1), "batch")))
  return place


def shape(width: int, devices: int) -> tuple[int, ...]:
  """The column axes of `width` columns: [W], or [D, W / D]."""
  return (width,) if devices == 1 else (devices, width // devices)


def block_split(mesh: Mesh | None, devices: int):
  """x -> x placed with its column blocks on their devices (x as it is on
  one device)."""
  def place(x):
    if devices == 1 or mesh is None:
      return x
    return jax.lax.with_sharding_constraint(
        x, NamedSharding(mesh, P(*(None,) * (x.ndim - 2), "batch", None)))
  return place


def chunk(x: jax.Array, first, size: int, devices: int) -> jax.Array:
  """[..., C] columns first .. first + C - 1 of x (first a multiple of C,
  C = `size`)."""
  if devices == 1:
    return jax.lax.dynamic_slice_in_dim(x, first, size, axis=x.ndim - 1)
  part = jax.lax.dynamic_slice_in_dim(x, first // devices, size // devices,
                                      axis=x.ndim - 1)
  return part.reshape(part.shape[:-2] + (size,))


def put_chunk(x: jax.Array, new: jax.Array, lead: tuple, first,
              devices: int) -> jax.Array:
  """x with `new` [..., C] written at columns first .. first + C - 1 and
  at `lead`, the start indices of x's other axes."""
  if devices == 1:
    return jax.lax.dynamic_update_slice(x, new, starts(*lead, first))
  size = new.shape[-1]
  blocks = new.reshape(new.shape[:-1] + (devices, size // devices))
  return jax.lax.dynamic_update_slice(x, blocks,
                                      starts(*lead, 0, first // devices))


def flat(x: jax.Array, devices: int) -> jax.Array:
  """x with its column axes as one, [..., W] (in block order)."""
  return x if devices == 1 else x.reshape(x.shape[:-2] + (-1,))


def flat_index(cols: jax.Array, width: int, size: int,
               devices: int) -> jax.Array:
  """Where columns `cols` of `width` are in `flat` (chunks of C =
  `size`)."""
  if devices == 1:
    return cols
  part = size // devices
  j, r = cols // size, cols % size
  return (r // part) * (width // devices) + j * part + r % part


def chunk_rows(ring: jax.Array, cur, first, rows: jax.Array, size: int,
               devices: int) -> jax.Array:
  """[R, C] rows `rows` of ring `cur` over a chunk's C = `size` columns:
  one gather on one device (charged what it reads), a slice of each
  device's block over several (each reads its own)."""
  if devices == 1:
    cols = first + jnp.arange(size)
    return ring[cur, rows[:, None], cols[None]]
  return chunk(jax.lax.dynamic_index_in_dim(ring, cur, keepdims=False),
               first, size, devices)[rows]


def ring_rows(ring: jax.Array, cur, at, count: int,
              devices: int) -> jax.Array:
  """[count, W] rows `at` .. `at + count - 1` of ring `cur` (their columns
  in `flat`'s order), sliced before they are gathered from (so that a
  gather is charged the rows, not the rings)."""
  size = (1, count) + ring.shape[2:]
  start = starts(cur, at, *(0,) * (ring.ndim - 2))
  return flat(jax.lax.dynamic_slice(ring, start, size)[0], devices)


def ring_row(ring: jax.Array, cur, at, devices: int) -> jax.Array:
  """[W] row `at` of ring `cur` (`ring_rows`)."""
  return ring_rows(ring, cur, at, 1, devices)[0]


def carry(ring: jax.Array, dst, src, first, carry: jax.Array, size: int,
          blocks: int, split) -> jax.Array:
  """ring[dst]'s C = `size` columns from `first` take ring[src]'s columns
  `carry` (over several devices a gather across them); `split` places
  the chunk's [R, C] columns."""
  if blocks == 1:
    rows = jnp.arange(ring.shape[1])[:, None]
    return jax.lax.dynamic_update_slice(
        ring, split(ring[src, rows, carry[None]])[None], starts(dst, 0, first))
  source = flat(jax.lax.dynamic_index_in_dim(ring, src, keepdims=False),
                blocks)
  # Whole columns taken: the gather's indices are the C columns', not one
  # per row and column.
  index = flat_index(carry, ring.shape[-1] * blocks, size, blocks)
  return put_chunk(ring, split(jnp.take(source, index, axis=1))[None],
                   (dst, 0), first, blocks)
