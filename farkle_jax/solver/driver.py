"""The solve driver, for any number of players (docs/model.md §4-§5, §8).

`run(config, workdir)` is the one pipeline: check the config, plan the
memory (refusing a run that cannot fit), lock the workdir, build the sweep,
restore the latest checkpoint, sweep in chunks with a progress line (or
bar) and an ETA until the largest change is below the tolerance, with
checkpoints, and write the results. What differs with the number of players
sits behind `Engine`: two players sweep with the compiled chunks of
`methods` (`chunk_engine`, every method); three or more with the stage
sweeps of `multiplayer` (`stage_engine`).
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
import ml_collections
from absl import logging

from farkle_jax.game import rules as rules_lib
from farkle_jax.solver import (checkpointing, chunk_engine, compile_cache,
                               configuration)
from farkle_jax.solver import engine as engine_lib
from farkle_jax.solver import integrity, locking, placement, results
from farkle_jax.solver import seat_wave_engine, stage_engine
from farkle_jax.solver.configuration import Settings
from farkle_jax.solver.engine import Chunk, Engine, Progress


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


def engine_for(config: ml_collections.ConfigDict) -> Engine:
  """The engine for the config's number of players; ConfigError or
  MemoryRefused before anything is built."""
  rules, settings = configuration.check(config)
  if rules.players == 2 and settings.method != configuration.SEATS:
    return chunk_engine.ChunkEngine(rules, settings)   # the scalar pass
  if settings.method == "wavefront":   # N players, the GPU's shape
    return seat_wave_engine.SeatWaveEngine(rules, settings)
  return stage_engine.StageEngine(rules, settings)


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
  _, settings = configuration.check(config)
  configuration.check_workdir(workdir)
  compile_cache.use(settings.compile_cache)
  engine = engine_for(config)
  marks = {"run": start}   # when each phase of this process ended
  with _lock(workdir):
    results.remove_stale_temporaries(workdir)
    marks["locked"] = time.time()
    need = engine.build()
    marks["built"] = time.time()
    ckpt = checkpointing.Checkpoints(
        os.path.join(workdir, "checkpoints"), engine.fingerprint(),
        keep=settings.checkpoint_keep, retired=engine.retired)
    try:  # close waits for an asynchronous save, whatever happens
      progress = engine.restore(ckpt) or Progress(
          engine.fresh(), 0, math.inf, [], [], 0.0, 0.0, 0, None)
      marks["opened"] = time.time()
      progress = _iterate(progress, engine, ckpt, settings, start, on_chunk)
      marks["swept"] = time.time()
    finally:
      ckpt.close()
    marks["closed"] = time.time()
    summary = {**engine.fields(progress),
               **_summary(progress, engine, settings, config, need, start),
               "seconds": _phases(marks)}
    summary["fingerprint"] = ckpt.fingerprint
    if placement.is_writer():  # one writer of a multi-process solve
      engine.write(workdir, summary, progress)
  logging.info("results written in %.2f s", time.time() - marks["closed"])
  _report(summary, progress, settings, workdir)
  return summary


def _process_start() -> float | None:
  """When this process started (seconds since the epoch, from Linux's
  /proc), or None where that cannot be read."""
  try:
    with open("/proc/self/stat") as f:
      ticks = int(f.read().rsplit(")", 1)[1].split()[19])   # starttime
    with open("/proc/uptime") as f:
      uptime = float(f.read().split()[0])
  except (OSError, ValueError, IndexError):
    return None
  return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _phases(marks: dict[str, float]) -> dict[str, float | None]:
  """Seconds of each phase of this process up to its results: starting
  (Python, the imports, the backend: None where unknown), building the
  tables and compiling, opening the checkpoints (and restoring), the
  sweeps (with their saves), and waiting for the last save; logged in
  one line."""
  born = _process_start()
  phases = {
      "starting": marks["run"] - born if born else None,
      "building_and_compiling": marks["built"] - marks["locked"],
      "opening_checkpoints": marks["opened"] - marks["built"],
      "sweeping": marks["swept"] - marks["opened"],
      "closing_checkpoints": marks["closed"] - marks["swept"]}
  logging.info("seconds: %s", ", ".join(
      f"{k.replace('_', ' ')} {v:.2f}" for k, v in phases.items()
      if v is not None))
  return phases


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
               "max change %.2e)", summary["trace"][-1]["first_player_win"]
               if summary["trace"] else float("nan"),
               "converged" if summary["converged"] else "NOT converged",
               progress.iteration, progress.residual)
  if not summary["converged"]:
    raise NotConverged(
        f"not converged: {progress.iteration} sweeps (solver.max_iterations) "
        f"left a max change of {progress.residual:.3e} >= solver.tol = "
        f"{settings.tol:g}; the values in {workdir} are marked unconverged. "
        "Rerun with a higher --config.solver.max_iterations to continue")


def ensure(config: ml_collections.ConfigDict, workdir: str,
           allow_unconverged: bool = False,
           on_chunk: Callable[[ChunkReport], None] | None = None
           ) -> results.Run:
  """Loads the two-player run in `workdir` if it holds these rules solved to
  the config's tolerance (or better); otherwise solves (resuming, telling
  `on_chunk` as `run` does) and loads.

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
    run(config, workdir, on_chunk)
  except NotConverged:
    if not allow_unconverged:
      raise
  return results.load(workdir, allow_unconverged)


def _check_chunk(engine: Engine, out: Chunk, iteration: int) -> float:
  """The chunk's opening value; SolveFault when its values are not
  probabilities, so nothing wrong reaches a checkpoint."""
  try:
    if out.done < 1:
      raise integrity.Damaged("no sweep ran")
    if not math.isfinite(out.residual):
      raise integrity.Damaged(f"the max change is {out.residual}")
    return engine.opening(out.state)
  except integrity.Damaged as e:
    raise SolveFault(f"sweep {iteration}: {e}; stopped before saving it "
                     "(the checkpoints hold the last good sweep)") from None


def _iterate(p: Progress, engine: Engine, ckpt: checkpointing.Checkpoints,
             settings: Settings, start: float,
             on_chunk: Callable[[ChunkReport], None] | None = None
             ) -> Progress:
  """Runs chunks of sweeps until converged or `max_iterations`, logging
  each chunk and checkpointing every `checkpoint_every` sweeps and at the
  end."""
  logging.info("solving to %s max change < %.1e", settings.norm, settings.tol)
  every = settings.checkpoint_every
  while p.iteration < settings.max_iterations and not p.residual < settings.tol:
    t0 = time.time()
    out = engine.advance(p, engine.chunk_sweeps(settings, p.iteration), ckpt)
    dt = time.time() - t0
    iteration, work = p.iteration + out.done, p.work + out.work
    eta = _eta(p.residual, out.residual, out.done, dt, settings.tol)
    logging.info("it=%d max_change=%.3e states/s=%.3g elapsed=%s eta=%s%s",
                 iteration, out.residual, engine.num_states * out.work / dt,
                 engine_lib.clock(time.time() - start), eta,
                 engine.note(out.state))
    if on_chunk is not None:
      on_chunk(ChunkReport(iteration, out.residual, settings.tol,
                           time.time() - start, eta))
    opening = _check_chunk(engine, out, iteration)
    trace = p.trace + [{"iteration": iteration, "residual": out.residual,
                        "work": work, "first_player_win": opening,
                        "sweep_seconds": p.sweep_seconds + dt}]
    p = p._replace(state=out.state, iteration=iteration,
                   residual=out.residual, history=p.history + out.history,
                   trace=trace, sweep_seconds=p.sweep_seconds + dt, work=work,
                   steps=p.steps + out.steps)
    if (iteration % every == 0 or out.residual < settings.tol
        or iteration >= settings.max_iterations):
      engine.save(ckpt, p)
  return p


def _summary(p: Progress, engine: Engine, settings: Settings,
             config: ml_collections.ConfigDict, need: int,
             start: float) -> dict[str, Any]:
  return {
      "converged": bool(p.residual < settings.tol),
      "iterations": p.iteration,
      "final_residual": p.residual if math.isfinite(p.residual) else None,
      "norm": settings.norm,
      "tol": settings.tol,
      "residual_history": p.history,
      "trace": p.trace,
      "model_states": engine.num_states,
      "method": engine.method,
      "state_updates": int(engine.num_states * p.work),
      "sweep_seconds": p.sweep_seconds,
      "wall_seconds_this_process": time.time() - start,
      "resumed_from": p.resumed_from,
      "memory_estimate_bytes": need,
      "peak_host_rss_bytes": resource.getrusage(
          resource.RUSAGE_SELF).ru_maxrss * 1024,
      "device": f"{jax.default_backend()}: {jax.devices()[0].device_kind}",
      "dtype": settings.dtype,
      "rules": engine.rules.to_dict(),
      "config": config.to_dict(),
  }


def _eta(prev: float, now: float, sweeps: int, dt: float, tol: float) -> str:
  """Time to reach tol if the change keeps shrinking at its recent rate."""
  if now < tol:
    return "0:00:00"
  if not (math.isfinite(prev) and 0 < now < prev and sweeps):
    return "?"
  rate = (now / prev) ** (1 / sweeps)
  left = math.log(tol / now) / math.log(rate)
  return engine_lib.clock(left * dt / sweeps)
