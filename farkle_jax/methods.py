"""Solve methods behind one interface, for `solve.run` and the benchmark.

* `value_iteration` (the published method, the baseline): the full state
  array, every state updated once per sweep (a whole turn of look-ahead).
* `ordered` (the default): start-of-turn values only, Gauss-Seidel in score
  order with exact in-stage solves (`ordered.py`).

Each method compiles one jitted chunk of sweeps (a `lax.while_loop` stopping
at a sweep limit or once the max change is below the tolerance) from shapes
alone, so its memory is known before anything is allocated.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax import bellman, ordered
from farkle_jax import tables as tables_lib
from farkle_jax.layout import StateLayout


class Progress(NamedTuple):
  """Result of one chunk of sweeps."""
  state: Any          # method state after the chunk
  residual: float     # max change of the last sweep
  history: list       # max change of each sweep of the chunk
  done: int           # sweeps run
  work: float         # states evaluated, in units of all model states


class _Chunk(NamedTuple):
  state: Any
  residual: jax.Array
  history: jax.Array
  done: jax.Array
  work: jax.Array


def _loop(sweep_fn, state, residual, limit, tol, max_sweeps):
  """Runs sweep_fn(state) -> (state, residual, work) up to `limit` times."""
  def cond(c):
    return (c.done < limit) & (c.residual >= tol)

  def body(c):
    state, res, work = sweep_fn(c.state)
    return _Chunk(state, res, c.history.at[c.done].set(res), c.done + 1,
                  c.work + work)

  init = _Chunk(state, residual, jnp.full((max_sweeps,), jnp.nan,
                                          residual.dtype),
                jnp.zeros((), jnp.int32), jnp.zeros((), residual.dtype))
  return jax.lax.while_loop(cond, body, init)


class _Method:
  """Common driver: compile once, run chunks, report memory."""

  def __init__(self, layout: StateLayout, roll: tables_lib.RollTables,
               dtype, relative: bool, max_sweeps: int, tol: float):
    self.layout, self.dtype, self.max_sweeps = layout, dtype, max_sweeps
    self.relative, self.tol = relative, tol
    self.roll = roll
    shapes = jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), self.abstract())
    scalar = jax.ShapeDtypeStruct((), dtype)
    self.compiled = jax.jit(
        type(self)._chunk, static_argnums=(0, 6), donate_argnums=1).lower(
            self, shapes, scalar, jax.ShapeDtypeStruct((), jnp.int32), scalar,
            self.tables, max_sweeps).compile()

  def memory_bytes(self) -> int | None:
    m = self.compiled.memory_analysis()
    if m is None:
      return None
    return (m.argument_size_in_bytes + m.output_size_in_bytes
            + m.temp_size_in_bytes - m.alias_size_in_bytes)

  def run(self, state, residual: float, limit: int) -> Progress:
    out = self.compiled(state, jnp.asarray(residual, self.dtype),
                        jnp.asarray(limit, jnp.int32),
                        jnp.asarray(self.tol, self.dtype), self.tables)
    done = int(out.done)
    return Progress(out.state, float(out.residual),
                    [float(x) for x in np.asarray(out.history)[:done]], done,
                    float(out.work))


class ValueIteration(_Method):
  """The full state [C, T + 1, 6, Kc]; one sweep updates every state.

  State: (values, w0, w0_source): the values, their start values, and the
  start values the last sweep read (the checkpointed part: one sweep from
  them rebuilds the values exactly).
  """
  name = "value_iteration"
  state_format = "w0-read-by-last-sweep/v1"

  def __init__(self, layout, roll, dtype, relative, max_sweeps, tol,
               init_value: float, b_group: int = 0):
    del b_group  # ordered-only setting
    self.tables = bellman.build(layout, roll, dtype)
    self.cfg = bellman.sweep_config(layout, relative)
    self.init_value = init_value
    super().__init__(layout, roll, dtype, relative, max_sweeps, tol)

  def abstract(self):
    w0 = jax.ShapeDtypeStruct(self.layout.key_shape, self.dtype)
    return (jax.ShapeDtypeStruct(self.layout.value_shape, self.dtype), w0, w0)

  def _chunk(self, state, residual, limit, tol, tabs, max_sweeps):
    def one(state):
      values, w0, _ = state
      values, res = bellman.sweep(values, w0, tabs, self.cfg)
      return ((values, bellman.start_values(values, self.cfg), w0), res,
              jnp.ones((), res.dtype))
    return _loop(one, state, residual, limit, tol, max_sweeps)

  def init(self):
    values = bellman.initial_values(self.layout, self.init_value, self.dtype)
    w0 = bellman.start_values(values, self.cfg)
    return (values, w0, jnp.copy(w0))  # distinct buffers: all are donated

  def checkpoint_like(self):
    return {"w0_source": jax.ShapeDtypeStruct(self.layout.key_shape,
                                              self.dtype)}

  def to_checkpoint(self, state):
    return {"w0_source": state[2]}

  def from_checkpoint(self, saved):
    values = bellman.initial_values(self.layout, self.init_value, self.dtype)
    w0 = saved["w0_source"]
    return self.run((values, w0, jnp.copy(w0)), math.inf, 1).state

  def start_values(self, state) -> np.ndarray:
    return np.asarray(state[1])


class Ordered(_Method):
  """Start values only, as a padded vector; ordered Gauss-Seidel sweeps.

  State: (vector, fresh): the padded W0 vector and whether it still holds
  initial values (the first sweep then warm-starts its in-stage solves).
  """
  name = "ordered"
  state_format = "padded-w0-vector/v1"

  def __init__(self, layout, roll, dtype, relative, max_sweeps, tol,
               init_value: float, b_group: int = 0):
    if b_group <= 0:  # CPUs like small sub-batches, accelerators one wide one
      cpu = jax.default_backend() == "cpu"
      b_group = 16 if cpu else -(-layout.num_scores // jax.device_count())
    self.mesh = ordered.make_mesh()
    stages, cfg = ordered.build(layout, b_group, self.mesh.size)
    self.cfg = cfg._replace(sweep=cfg.sweep._replace(relative=relative))
    self.tables = (stages, bellman.roll_arrays(roll, dtype))
    self.init_value = init_value
    super().__init__(layout, roll, dtype, relative, max_sweeps, tol)

  def abstract(self):
    return (jax.ShapeDtypeStruct((self.cfg.vector_size,), self.dtype),
            jax.ShapeDtypeStruct((), jnp.bool_))

  def _chunk(self, state, residual, limit, tol, tables, max_sweeps):
    def one(state):
      vector, fresh = state
      vector, res, work = ordered.sweep(vector, *tables, self.cfg, self.mesh,
                                        fresh)
      return (vector, jnp.zeros((), jnp.bool_)), res, work
    return _loop(one, state, residual, limit, tol, max_sweeps)

  def init(self):
    return (ordered.initial_vector(self.layout, self.init_value, self.dtype),
            jnp.ones((), jnp.bool_))

  def checkpoint_like(self):
    return {"vector": jax.ShapeDtypeStruct((self.cfg.vector_size,),
                                           self.dtype)}

  def to_checkpoint(self, state):
    return {"vector": state[0]}

  def from_checkpoint(self, saved):
    return (saved["vector"], jnp.zeros((), jnp.bool_))

  def start_values(self, state) -> np.ndarray:
    return np.asarray(ordered.unpad(state[0], self.layout))


METHODS = {m.name: m for m in (ValueIteration, Ordered)}
