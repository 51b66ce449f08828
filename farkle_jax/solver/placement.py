"""Where arrays live when a solve spans devices, or processes.

A compiled chunk wants its arguments in the shardings it was compiled for;
a fresh or restored array may sit on one device. And when several processes
share a solve, an array on all devices is not fully visible to any one of
them: each reads its own copy (the values that leave the solver, the max
change, the start values, checkpoint checksums, are replicated).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


_AIMED: list[Mesh] = []   # meshes of a target compiled for (`meshed`)


def make_mesh() -> Mesh:
  """A one-axis mesh of every visible device (of every process): the
  methods split their work along its axis, "batch". Within `meshed(m)`,
  m (a GPU compiled for without one: `solver.compile_target`)."""
  if _AIMED:
    return _AIMED[-1]
  return Mesh(np.array(jax.devices()), ("batch",))


def aimed() -> Mesh | None:
  """The mesh of the target compiled for, if any."""
  return _AIMED[-1] if _AIMED else None


@contextlib.contextmanager
def meshed(mesh: Mesh) -> Iterator[None]:
  """Within: `make_mesh()` answers `mesh`."""
  _AIMED.append(mesh)
  try:
    yield
  finally:
    _AIMED.pop()


def on_device(x: Any, dtype: Any = None) -> jax.Array:
  """`x` on the default device as `dtype`, converted on the host: a
  conversion on the device compiles a small program for each shape and
  dtype (tens of milliseconds each on a GPU, at every start of a run)."""
  return jax.device_put(np.asarray(x, dtype))


def everywhere(mesh: Mesh) -> NamedSharding:
  """A whole copy on every device of `mesh`."""
  return NamedSharding(mesh, PartitionSpec())


def is_writer() -> bool:
  """Whether this process writes the run's files and speaks for it
  (process 0 of a multi-process solve; the only one otherwise)."""
  return jax.process_index() == 0


def place(x: Any, sharding: jax.sharding.Sharding) -> jax.Array:
  """x in `sharding` (a no-op when it is there already; across processes
  each places its own shards from its copy)."""
  if isinstance(x, jax.Array) and x.sharding == sharding:
    return x
  if isinstance(x, jax.Array) and x.is_fully_addressable:
    x = np.asarray(x)
  return jax.device_put(x, sharding)


def local_copy(x: Any) -> np.ndarray:
  """This process's copy of a replicated array, as NumPy."""
  if isinstance(x, jax.Array) and not x.is_fully_addressable:
    if not x.is_fully_replicated:
      raise ValueError("local_copy of an array split across processes")
    return np.asarray(x.addressable_shards[0].data)
  return np.asarray(x)
