"""Two players: sweeps in compiled chunks of any method (`methods`).

The engine behind `driver.run` when `rules.players == 2`. Its turn pass is
the scalar two-player one; every method (ordered, Newton, wavefront, value
iteration) and multi-device meshes apply. Checkpoints hold the method's
state with the sweep count and the last change.
"""

from __future__ import annotations

import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import (checkpointing, compile_cache, integrity, memory,
                               methods)
from farkle_jax.solver import results
from farkle_jax.solver.configuration import Settings
from farkle_jax.solver.engine import Chunk, Progress, fingerprint


class ChunkEngine:
  """Two players swept by a compiled method (see `driver.Engine`)."""
  retired = ()

  def __init__(self, rules: Rules, settings: Settings):
    """Resolves the method and refuses what cannot fit, from the sizes."""
    asked = settings.method
    self.settings = settings._replace(method=methods.resolve(
        asked, dice_alike=rules.dice_alike))
    self.rules, self.method = rules, self.settings.method
    logging.info("method %s (%s)", self.method,
                 f"auto on a {jax.default_backend()} backend"
                 if asked == "auto" else "as configured")
    self.layout = StateLayout(rules, settings.chunk_keys)
    self.num_states = self.layout.num_states
    _check_backend(self.layout, self.settings)
    self._plan_memory(None)
    self.chunk: methods.CompiledChunk | None = None
    self.roll: roll_tables.RollTables | None = None

  def build(self) -> int:
    self.roll = roll_tables.build(self.rules)
    t0 = time.time()
    method = methods.build(self.layout, self.roll, self.settings)
    t1 = time.time()
    self.chunk = self._compile(method)
    method = self.chunk.method
    logging.info("method %s built in %.1f s, compiled in %.1f s%s",
                 method.name, t1 - t0, time.time() - t1,
                 "" if compile_cache.active() else " (compile cache off)")
    return self._plan_memory(self.chunk.memory_bytes())

  def _compile(self, method: methods.Method) -> methods.CompiledChunk:
    """The compiled chunk; where the fused kernel was chosen for the device
    (kernel 'auto') and does not compile, XLA's step instead, said in one
    warning line (the kernel has been compiled for an H100 without one,
    not yet run on one)."""
    try:
      return methods.compile_chunk(method, self.settings)
    except Exception as e:  # noqa: BLE001  (Triton's errors have no base)
      if method.name != "wavefront" or self.settings.kernel != "auto":
        raise
      first = (str(e).splitlines() or [type(e).__name__])[0][:200]
      logging.warning("the fused kernel did not compile (%s); the "
                      "wavefront runs XLA's step", first)
      xla = self.settings._replace(kernel="xla")
      return methods.compile_chunk(
          methods.build(self.layout, self.roll, xla), xla)

  def _plan_memory(self, compiled_bytes: int | None) -> int:
    s = self.settings
    method = s.method + "-newton" if s.method in (
        "ordered", "wavefront") and s.newton else s.method  # + exit tables
    need = memory.check_solve(self.layout, method, s.dtype,
                              s.memory_limit_gb, compiled_bytes)
    logging.info("memory estimate %.2f GB over %d device(s) (%s)",
                 need / 2**30, jax.device_count(),
                 "from the sizes" if compiled_bytes is None
                 else "with the compiled chunk")
    return need

  def fingerprint(self) -> dict[str, Any]:
    return fingerprint(self.rules, self.layout.key_shape,
                       self.chunk.method.state_format, self.settings.dtype,
                       self.method)

  def fresh(self) -> methods.State:
    return self.chunk.method.init()

  def restore(self, ckpt: checkpointing.Checkpoints) -> Progress | None:
    """The progress of the latest checkpoint, or None."""
    chunk, method = self.chunk, self.chunk.method
    scalar = lambda dtype: jax.ShapeDtypeStruct(   # noqa: E731
        (), jnp.dtype(dtype), sharding=chunk.replicated())
    restored = ckpt.restore(
        {**chunk.checkpoint_target(), "iteration": scalar(jnp.int64),
         "residual": scalar(self.settings.dtype)},
        check=lambda saved: _check_saved(saved, method))
    if restored is None:
      return None
    step, saved, meta = restored
    progress = Progress(
        state=method.from_checkpoint(saved, chunk.one_sweep),
        iteration=int(saved["iteration"]), residual=float(saved["residual"]),
        history=list(meta.get("history", [])),
        trace=list(meta.get("trace", [])),
        sweep_seconds=float(meta.get("sweep_seconds", 0.0)),
        work=float(meta.get("work", int(saved["iteration"]))),
        steps=int(meta.get("steps", 0)),
        resumed_from=step)
    logging.info("resumed from checkpoint %d (residual %.3e)",
                 progress.iteration, progress.residual)
    return progress

  def chunk_sweeps(self, settings: Settings, iteration: int) -> int:
    every = settings.checkpoint_every
    return min(settings.sweeps_per_call, settings.max_iterations - iteration,
               every - iteration % every)

  def advance(self, p: Progress, sweeps: int,
              ckpt: checkpointing.Checkpoints) -> Chunk:
    del ckpt   # a chunk is saved whole, after it
    out = self.chunk.run(p.state, p.residual, sweeps)
    return Chunk(out.state, out.done, out.residual, out.history, out.work,
                 out.steps)

  def opening(self, state: methods.State) -> float:
    w0 = self.chunk.method.start_values(state)
    integrity.check_probabilities(w0, "the start values")
    return float(w0[self.layout.opening_key()])

  def note(self, state: methods.State) -> str:
    return ""

  def save(self, ckpt: checkpointing.Checkpoints, p: Progress) -> None:
    ckpt.save(p.iteration, {
        **self.chunk.method.to_checkpoint(p.state),
        **jax.device_put({
            "iteration": np.asarray(p.iteration, np.int64),
            "residual": np.asarray(p.residual, self.settings.dtype)},
            self.chunk.replicated())},
        {"history": p.history, "sweep_seconds": p.sweep_seconds,
         "work": p.work, "steps": p.steps, "trace": p.trace})

  def fields(self, p: Progress) -> dict[str, Any]:
    w0 = self.chunk.method.start_values(p.state)
    return {
        "first_player_win": float(w0[self.layout.opening_key()]),
        # Sweeps of this process and those before it that counted them.
        "dependent_steps_per_sweep": (round(p.steps / p.iteration)
                                      if p.iteration and p.steps else None),
    }

  def write(self, workdir: str, summary: dict[str, Any], p: Progress
            ) -> None:
    results.write(workdir, summary, self.chunk.method.start_values(p.state),
                  self.layout, self.roll, self.settings.slices)


def _check_backend(layout: StateLayout, settings: Settings) -> None:
  """Refuses float64 without 64-bit JAX; logs the backend and the model."""
  if jnp.dtype(settings.dtype) == jnp.float64 and not jax.config.jax_enable_x64:
    raise RuntimeError("float64 needs jax_enable_x64 before any array exists")
  logging.info("backend %s, device %s (%d visible)", jax.default_backend(),
               jax.devices()[0].device_kind, jax.device_count())
  logging.info("rules %s: %s model states, %s", layout.rules.name,
               f"{layout.num_states:,}", settings.dtype)


def _check_saved(saved: dict, method: methods.Method) -> None:
  """Damaged unless a restored state is one the solver could have saved."""
  for name in method.checkpoint_shape:
    integrity.check_probabilities(saved[name], f"checkpoint {name}")
  residual, iteration = float(saved["residual"]), int(saved["iteration"])
  if not (math.isfinite(residual) and residual >= 0 and iteration >= 1):
    raise integrity.Damaged(f"checkpoint counters: iteration {iteration}, "
                            f"residual {residual}")
