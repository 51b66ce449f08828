"""The solve driver: sweeps to a tolerance, resumable (docs/model.md §4-§5).

`run(config, workdir)` is the pipeline: check the config, plan the memory
(refusing a run that cannot fit), build and compile the method, restore the
latest checkpoint of the workdir, iterate in jitted chunks of sweeps with a
log line per chunk and checkpoints, and write the results (`results`).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import resource
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import checkpointing, configuration, integrity
from farkle_jax.solver import locking, memory, methods, placement, results
from farkle_jax.solver.configuration import Settings


class Progress(NamedTuple):
  """Where a solve stands: the method state and the counts so far."""
  state: methods.State
  iteration: int             # sweeps done
  residual: float            # max change of the last sweep
  history: list[float]       # max change of every sweep
  trace: list[dict]          # per chunk: iteration, residual, work, W(start)
  sweep_seconds: float       # time spent in sweeps, all processes
  work: float                # states evaluated, in sweeps of all states
  steps: int                 # dependent loop steps of all sweeps
  resumed_from: int | None   # checkpoint step this process started from


class ChunkReport(NamedTuple):
  """What a progress display is told after each chunk of sweeps."""
  iteration: int       # sweeps done
  residual: float      # max change of the last sweep
  tol: float           # the tolerance it must fall below
  elapsed: float       # seconds since the run started
  eta: str             # h:mm:ss to the tolerance at the recent rate, or ?


class SolveFault(RuntimeError):
  """The solve produced values that break an invariant of the model."""


class NotConverged(RuntimeError):
  """The run stopped at max_iterations above its tolerance."""


def run(config: ml_collections.ConfigDict, workdir: str,
        on_chunk: Callable[[ChunkReport], None] | None = None
        ) -> dict[str, Any]:
  """Solves the configured rules in `workdir` (resuming), writes results.

  `on_chunk`, if given, is told where the run stands after each chunk of
  sweeps (a progress bar, which then replaces the chunk's log line).

  Returns:
    The summary dict that is also written to workdir/summary.json.

  Raises:
    ConfigError, MemoryRefused: before anything is built or written.
    WorkdirLocked: another solve holds the workdir.
    CheckpointMismatch: the workdir holds another model's checkpoint.
    SolveFault: a sweep produced a value that is not a probability.
    NotConverged: max_iterations reached above the tolerance (the results
      are written, marked not converged).
  """
  start = time.time()
  rules, settings = configuration.check(config)
  configuration.check_workdir(workdir)
  asked = settings.method
  settings = settings._replace(method=methods.resolve(asked))
  logging.info("method %s (%s)", settings.method,
               f"auto on a {jax.default_backend()} backend" if asked == "auto"
               else "as configured")
  layout = StateLayout(rules, settings.chunk_keys)
  _check_backend(rules, layout, settings)
  _plan_memory(layout, settings, None)  # from the sizes, before any table
  with _lock(workdir):
    results.remove_stale_temporaries(workdir)
    roll = roll_tables.build(rules)
    chunk = _compile(layout, roll, settings)
    need = _plan_memory(layout, settings, chunk.memory_bytes())
    ckpt = checkpointing.Checkpoints(
        os.path.join(workdir, "checkpoints"),
        fingerprint(rules, layout, settings, chunk.method.state_format),
        keep=settings.checkpoint_keep)
    try:  # close waits for an asynchronous save, whatever happens
      progress = _restore(ckpt, chunk, settings)
      progress = _iterate(progress, chunk, ckpt, layout, settings, start,
                          on_chunk)
    finally:
      ckpt.close()
    w0 = chunk.method.start_values(progress.state)
    summary = _summary(progress, w0, layout, settings, config, need, start)
    summary["fingerprint"] = ckpt.fingerprint
    if placement.is_writer():  # one writer of a multi-process solve
      results.write(workdir, summary, w0, layout, roll, settings.slices)
  _report(summary, progress, settings, workdir)
  return summary


def _lock(workdir: str) -> contextlib.AbstractContextManager:
  """The workdir's lock, held by process 0 of a multi-process solve (its
  other processes are part of the same solve)."""
  try:
    os.makedirs(workdir, exist_ok=True)
    if not placement.is_writer():
      return contextlib.nullcontext()
    lock = locking.WorkdirLock(workdir)
    lock.__enter__()
  except OSError as e:
    if e.errno in (errno.ENOSPC, errno.EDQUOT):   # not a usage error
      raise
    raise configuration.ConfigError(
        f"--workdir={workdir}: cannot write there ({e.strerror})") from None
  return lock


def _report(summary: dict[str, Any], progress: Progress, settings: Settings,
            workdir: str) -> None:
  """Logs the outcome; NotConverged if the run stopped above its tol."""
  logging.info("first-player win probability %.9f (%s after %d sweeps, "
               "max change %.2e)", summary["first_player_win"],
               "converged" if summary["converged"] else "NOT converged",
               progress.iteration, progress.residual)
  if not summary["converged"]:
    raise NotConverged(
        f"not converged: {progress.iteration} sweeps (solver.max_iterations) "
        f"left a max change of {progress.residual:.3e} >= solver.tol = "
        f"{settings.tol:g}; the values in {workdir} are marked unconverged. "
        "Rerun with a higher --config.solver.max_iterations to continue")


def ensure(config: ml_collections.ConfigDict, workdir: str,
           allow_unconverged: bool = False) -> results.Run:
  """Loads the run in `workdir` if it holds these rules solved to the
  config's tolerance (or better); otherwise solves (resuming) and loads.

  With `allow_unconverged`, a run that stops at max_iterations is loaded
  (marked so in its summary) instead of raising NotConverged.
  """
  rules, settings = configuration.check(config)
  try:
    summary = results.read_summary(workdir)
    if (summary is not None and summary.get("converged")
        and rules_lib.from_mapping(summary["rules"]) == rules
        and summary["norm"] == settings.norm
        and summary["tol"] <= settings.tol):
      loaded = results.load(workdir)
      logging.info("using the finished run in %s", workdir)
      return loaded
  except results.ResultsError as e:  # damaged: solved again (resuming)
    logging.warning("%s", e)
  try:
    run(config, workdir)
  except NotConverged:
    if not allow_unconverged:
      raise
  return results.load(workdir, allow_unconverged)


def fingerprint(rules: Rules, layout: StateLayout, settings: Settings,
                state_format: str) -> dict[str, Any]:
  """What a checkpoint must match to be resumed by this run."""
  return {"rules": rules.to_dict(), "key_shape": list(layout.key_shape),
          "state_format": state_format, "dtype": settings.dtype,
          "method": settings.method}


def _check_backend(rules: Rules, layout: StateLayout, settings: Settings
                   ) -> None:
  """Refuses float64 without 64-bit JAX; logs the backend and the model."""
  if jnp.dtype(settings.dtype) == jnp.float64 and not jax.config.jax_enable_x64:
    raise RuntimeError("float64 needs jax_enable_x64 before any array exists")
  logging.info("backend %s, device %s (%d visible)", jax.default_backend(),
               jax.devices()[0].device_kind, jax.device_count())
  logging.info("rules %s: %s model states, %s", rules.name,
               f"{layout.num_states:,}", settings.dtype)


def _plan_memory(layout: StateLayout, settings: Settings,
                 compiled_bytes: int | None) -> int:
  method = settings.method
  if method == "ordered" and settings.newton:
    method = "ordered-newton"  # with the exit tables
  need = memory.check_solve(layout, method, settings.dtype,
                            settings.memory_limit_gb, compiled_bytes)
  logging.info("memory estimate %.2f GB over %d device(s) (%s)",
               need / 2**30, jax.device_count(),
               "from the sizes" if compiled_bytes is None
               else "with the compiled chunk")
  return need


def _compile(layout: StateLayout, roll: roll_tables.RollTables,
             settings: Settings) -> methods.CompiledChunk:
  t0 = time.time()
  chunk = methods.compile_chunk(methods.build(layout, roll, settings),
                                settings)
  logging.info("method %s compiled in %.1f s", chunk.method.name,
               time.time() - t0)
  return chunk


def _restore(ckpt: checkpointing.Checkpoints, chunk: methods.CompiledChunk,
             settings: Settings) -> Progress:
  """The progress of the latest checkpoint, or a fresh start."""
  method = chunk.method
  restored = ckpt.restore(
      {**chunk.checkpoint_target(),
       "iteration": jax.ShapeDtypeStruct((), jnp.int64,
                                         sharding=chunk.replicated()),
       "residual": jax.ShapeDtypeStruct((), jnp.dtype(settings.dtype),
                                        sharding=chunk.replicated())},
      check=lambda saved: _check_saved(saved, method))
  if restored is None:
    return Progress(method.init(), 0, math.inf, [], [], 0.0, 0.0, 0, None)
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


def _check_saved(saved: dict, method: methods.Method) -> None:
  """Damaged unless a restored state is one the solver could have saved."""
  for name in method.checkpoint_shape:
    integrity.check_probabilities(saved[name], f"checkpoint {name}")
  residual, iteration = float(saved["residual"]), int(saved["iteration"])
  if not (math.isfinite(residual) and residual >= 0 and iteration >= 1):
    raise integrity.Damaged(f"checkpoint counters: iteration {iteration}, "
                            f"residual {residual}")


def _check_chunk(out: methods.Progress, w0: np.ndarray, iteration: int
                 ) -> None:
  """Stops the run (SolveFault) when a chunk's values are not
  probabilities, so nothing wrong reaches a checkpoint."""
  try:
    if out.done < 1:
      raise integrity.Damaged("no sweep ran")
    if not math.isfinite(out.residual):
      raise integrity.Damaged(f"the max change is {out.residual}")
    integrity.check_probabilities(w0, "the start values")
  except integrity.Damaged as e:
    raise SolveFault(f"sweep {iteration}: {e}; stopped before saving it "
                     "(the checkpoints hold the last good sweep)") from None


def _iterate(p: Progress, chunk: methods.CompiledChunk,
             ckpt: checkpointing.Checkpoints, layout: StateLayout,
             settings: Settings, start: float,
             on_chunk: Callable[[ChunkReport], None] | None = None
             ) -> Progress:
  """Runs chunks of sweeps until converged or `max_iterations`, logging
  each chunk and checkpointing every `checkpoint_every` sweeps and at the
  end."""
  logging.info("solving to %s max change < %.1e", settings.norm, settings.tol)
  every = settings.checkpoint_every
  while p.iteration < settings.max_iterations and not p.residual < settings.tol:
    k = min(settings.sweeps_per_call, settings.max_iterations - p.iteration,
            every - p.iteration % every)
    t0 = time.time()
    out = chunk.run(p.state, p.residual, k)
    dt = time.time() - t0
    iteration, work = p.iteration + out.done, p.work + out.work
    steps = p.steps + out.steps
    eta = _eta(p.residual, out.residual, out.done, dt, settings.tol)
    # A progress display replaces the chunk's log line (DEBUG then).
    log = logging.info if on_chunk is None else logging.debug
    log("it=%d max_change=%.3e states/s=%.3g elapsed=%s eta=%s", iteration,
        out.residual, layout.num_states * out.work / dt,
        _clock(time.time() - start), eta)
    if on_chunk is not None:
      on_chunk(ChunkReport(iteration, out.residual, settings.tol,
                           time.time() - start, eta))
    w0 = chunk.method.start_values(out.state)
    _check_chunk(out, w0, iteration)
    w_start = w0[layout.opening_key()]
    trace = p.trace + [{"iteration": iteration, "residual": out.residual,
                        "work": work, "first_player_win": float(w_start),
                        "sweep_seconds": p.sweep_seconds + dt}]
    p = p._replace(state=out.state, iteration=iteration,
                   residual=out.residual, history=p.history + out.history,
                   trace=trace, sweep_seconds=p.sweep_seconds + dt, work=work,
                   steps=steps)
    if (iteration % every == 0 or out.residual < settings.tol
        or iteration >= settings.max_iterations):
      ckpt.save(iteration, {
          **chunk.method.to_checkpoint(p.state),
          **jax.device_put({
              "iteration": np.asarray(iteration, np.int64),
              "residual": np.asarray(out.residual, settings.dtype)},
              chunk.replicated())},
          {"history": p.history, "sweep_seconds": p.sweep_seconds,
           "work": work, "steps": steps, "trace": trace})
  return p


def _summary(p: Progress, w0, layout: StateLayout, settings: Settings,
             config: ml_collections.ConfigDict, need: int,
             start: float) -> dict[str, Any]:
  return {
      "first_player_win": float(w0[layout.opening_key()]),
      "converged": bool(p.residual < settings.tol),
      "iterations": p.iteration,
      "final_residual": p.residual,
      "norm": settings.norm,
      "tol": settings.tol,
      "residual_history": p.history,
      "trace": p.trace,
      "model_states": layout.num_states,
      "method": settings.method,
      "state_updates": int(layout.num_states * p.work),
      # Sweeps of this process and those before it that counted them.
      "dependent_steps_per_sweep": (round(p.steps / p.iteration)
                                    if p.iteration and p.steps else None),
      "sweep_seconds": p.sweep_seconds,
      "wall_seconds_this_process": time.time() - start,
      "resumed_from": p.resumed_from,
      "memory_estimate_bytes": need,
      "peak_host_rss_bytes": resource.getrusage(
          resource.RUSAGE_SELF).ru_maxrss * 1024,
      "device": f"{jax.default_backend()}: {jax.devices()[0].device_kind}",
      "dtype": settings.dtype,
      "rules": layout.rules.to_dict(),
      "config": config.to_dict(),
  }


def _clock(seconds: float) -> str:
  seconds = int(seconds)
  return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _eta(prev: float, now: float, sweeps: int, dt: float, tol: float) -> str:
  """Time to reach tol if the change keeps shrinking at its recent rate."""
  if now < tol:
    return "0:00:00"
  if not (math.isfinite(prev) and 0 < now < prev and sweeps):
    return "?"
  rate = (now / prev) ** (1 / sweeps)
  left = math.log(tol / now) / math.log(rate)
  return _clock(left * dt / sweeps)
