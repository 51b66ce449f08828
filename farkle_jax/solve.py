"""Solving a rule set: value iteration to a tolerance, resumable.

`run(config, workdir)` validates the config, estimates the memory it needs
(and refuses a run that cannot fit), restores the latest checkpoint of the
workdir when there is one, iterates in jitted chunks of sweeps with a log line
per chunk, checkpoints, and writes the results:

  workdir/summary.json       first-player win probability, iterations, final
                             residual, wall time, device, full config
  workdir/start_values.npy   converged W0[b, d, f, e] (float64)
  workdir/tables/*.txt|json  turn tables of the configured slices
  workdir/checkpoints/       Orbax checkpoints (resume state)
"""

from __future__ import annotations

import json
import math
import os
import resource
import time
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from absl import logging

from farkle_jax import checkpointing, configuration, methods, queries
from farkle_jax import tables as tables_lib
from farkle_jax.layout import StateLayout
from farkle_jax import rules as rules_lib
from farkle_jax.rules import Rules

RUNTIME_BYTES = 2**29  # XLA runtime, tables and host-side bookkeeping


def fingerprint(rules: Rules, layout: StateLayout, settings,
                state_format: str) -> dict[str, Any]:
  """What a checkpoint must match to be resumed by this run."""
  return {"rules": rules.to_dict(), "key_shape": list(layout.key_shape),
          "state_format": state_format, "dtype": settings.dtype,
          "method": settings.method}


def available_bytes() -> tuple[int, str]:
  """Memory available to the default device, and where the figure comes from."""
  dev = jax.devices()[0]
  stats = dev.memory_stats() if dev.platform != "cpu" else None
  if stats and "bytes_limit" in stats:
    return int(stats["bytes_limit"]), f"{dev.device_kind} memory"
  with open("/proc/meminfo") as f:
    info = dict(line.split(":", 1) for line in f)
  return int(info["MemAvailable"].split()[0]) * 1024, "available host memory"


class MemoryRefused(MemoryError):
  """A run that would not fit the device, with a setting that would."""


def check_memory(rules: Rules, settings, layout: StateLayout,
                 compiled_bytes: int | None = None) -> int:
  """Estimates the run's footprint; raises MemoryRefused if it cannot fit.

  The estimate is XLA's memory analysis of the compiled chunk when given
  (arguments + outputs + temporaries - donated aliases), else the layout's
  count of the full value array and the sweep's temporaries; plus the
  runtime.
  """
  need = layout.memory_bytes(settings.dtype) + RUNTIME_BYTES
  if compiled_bytes is not None:
    need = compiled_bytes + RUNTIME_BYTES
  if settings.memory_limit_gb is not None:
    have, where = int(settings.memory_limit_gb * 2**30), "memory_limit_gb"
  else:
    have, where = available_bytes()
  logging.info("memory estimate %.2f GB (%s: %.2f GB)", need / 2**30, where,
               have / 2**30)
  if need <= have:
    return need
  hint = []
  if settings.method != "ordered":
    hint.append("solver.method='ordered' (start-of-turn values only)")
  if rules.has_penalty:
    floor = rules.floor
    while floor < 0:
      floor = min(0, floor + 500)
      trial = StateLayout(rules.replace(floor=floor), layout.chunk_keys)
      if trial.memory_bytes(settings.dtype) * need // max(
          1, layout.memory_bytes(settings.dtype)) <= have:
        hint.append(f"rules.floor={floor}")
        break
  if settings.dtype == "float64":
    hint.append("solver.dtype='float32' (halves the values, ~1e-7 accuracy)")
  raise MemoryRefused(
      f"this run needs about {need / 2**30:.2f} GB but {where} is "
      f"{have / 2**30:.2f} GB; settings that would fit: "
      f"{', '.join(hint) or 'none of floor/dtype; use a larger device'}")


def run(config: ml_collections.ConfigDict, workdir: str) -> dict[str, Any]:
  """Solves the configured rules in `workdir` (resuming), writes results.

  Returns:
    The summary dict that is also written to workdir/summary.json.
  """
  start = time.time()
  rules, settings = configuration.check(config)
  dtype = jnp.dtype(settings.dtype)
  if dtype == jnp.float64 and not jax.config.jax_enable_x64:
    raise RuntimeError("float64 needs jax_enable_x64 before any array exists")
  layout = StateLayout(rules, settings.chunk_keys)
  dev = jax.devices()[0]
  logging.info("backend %s, device %s (%d visible)", jax.default_backend(),
               dev.device_kind, jax.device_count())
  logging.info("rules %s: %s model states, %s", rules.name,
               f"{layout.num_states:,}", settings.dtype)
  if settings.method == "value_iteration":
    check_memory(rules, settings, layout)  # cheap bound before compiling
  roll = tables_lib.build(rules)
  t0 = time.time()
  method = methods.METHODS[settings.method](
      layout, roll, dtype, settings.norm == "relative",
      settings.iterations_per_call, settings.tol, settings.init_value,
      settings.b_group)
  logging.info("method %s compiled in %.1f s", method.name, time.time() - t0)
  need = check_memory(rules, settings, layout, method.memory_bytes())
  os.makedirs(workdir, exist_ok=True)

  state = method.init()
  ckpt = checkpointing.Checkpoints(
      os.path.join(workdir, "checkpoints"),
      fingerprint(rules, layout, settings, method.state_format),
      keep=settings.checkpoint_keep)
  iteration, residual, history, sweep_seconds = 0, math.inf, [], 0.0
  trace = []  # per chunk: iteration, residual, work, first-player value
  work = 0.0  # states evaluated, in units of all model states
  restored = ckpt.restore(
      {**method.checkpoint_like(),
       "iteration": jax.ShapeDtypeStruct((), jnp.int64),
       "residual": jax.ShapeDtypeStruct((), dtype)})
  resumed_from = None
  if restored is not None:
    resumed_from, saved, meta = restored
    state = method.from_checkpoint(saved)
    iteration = int(saved["iteration"])
    residual = float(saved["residual"])
    history = list(meta.get("history", []))
    trace = list(meta.get("trace", []))
    sweep_seconds = float(meta.get("sweep_seconds", 0.0))
    work = float(meta.get("work", iteration))
    logging.info("resumed from checkpoint %d (residual %.3e)", iteration,
                 residual)

  zero = layout.index_of(0)
  logging.info("solving to %s max change < %.1e", settings.norm, settings.tol)
  last_log_res = residual
  while iteration < settings.max_iterations and not residual < settings.tol:
    k = min(settings.iterations_per_call, settings.max_iterations - iteration,
            settings.checkpoint_every - iteration % settings.checkpoint_every)
    t0 = time.time()
    out = method.run(state, residual, k)
    dt = time.time() - t0
    state, residual = out.state, out.residual
    history += out.history
    iteration += out.done
    work += out.work
    sweep_seconds += dt
    eta = _eta(last_log_res, residual, out.done, dt, settings.tol)
    logging.info("it=%d max_change=%.3e states/s=%.3g elapsed=%s eta=%s",
                 iteration, residual, layout.num_states * out.work / dt,
                 _clock(time.time() - start), eta)
    last_log_res = residual
    w_start = method.start_values(state)[zero, zero, 0, 0]
    trace.append({"iteration": iteration, "residual": residual,
                  "work": work, "first_player_win": float(w_start),
                  "sweep_seconds": sweep_seconds})
    if (iteration % settings.checkpoint_every == 0
        or residual < settings.tol or iteration >= settings.max_iterations):
      ckpt.save(iteration, {**method.to_checkpoint(state),
                            "iteration": jnp.asarray(iteration, jnp.int64),
                            "residual": jnp.asarray(residual, dtype)},
                {"history": history, "sweep_seconds": sweep_seconds,
                 "work": work, "trace": trace})
  ckpt.close()

  w0 = method.start_values(state)
  np.save(os.path.join(workdir, "start_values.npy"), w0)
  converged = residual < settings.tol
  first = float(w0[layout.index_of(0), layout.index_of(0), 0, 0])
  summary = {
      "first_player_win": first,
      "converged": bool(converged),
      "iterations": iteration,
      "final_residual": residual,
      "norm": settings.norm,
      "tol": settings.tol,
      "residual_history": history,
      "trace": trace,
      "model_states": layout.num_states,
      "state_updates": int(layout.num_states * work),
      "sweep_seconds": sweep_seconds,
      "wall_seconds_this_process": time.time() - start,
      "resumed_from": resumed_from,
      "memory_estimate_bytes": need,
      "peak_host_rss_bytes": resource.getrusage(
          resource.RUSAGE_SELF).ru_maxrss * 1024,
      "device": f"{jax.default_backend()}: {dev.device_kind}",
      "dtype": settings.dtype,
      "rules": rules.to_dict(),
      "config": config.to_dict(),
  }
  with open(os.path.join(workdir, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1, default=str)
  write_tables(workdir, w0, layout, roll, settings.slices)
  logging.info("first-player win probability %.9f (%s after %d sweeps, "
               "max change %.2e)", first,
               "converged" if converged else "NOT converged", iteration,
               residual)
  return summary


def write_tables(workdir: str, w0: np.ndarray, layout: StateLayout,
                 roll: tables_lib.RollTables, slices) -> list[str]:
  """Writes the turn table of each slice as text and JSON; returns the texts."""
  os.makedirs(os.path.join(workdir, "tables"), exist_ok=True)
  texts = []
  for b, d, f, e in slices:
    table = queries.turn_table(w0, layout, roll, b, d, f, e)
    name = os.path.join(workdir, "tables", f"turn_b{b}_d{d}_f{f}_e{e}")
    text = queries.format_table(table)
    with open(name + ".txt", "w") as fh:
      fh.write(text + "\n")
    with open(name + ".json", "w") as fh:
      fh.write(queries.to_json(table))
    texts.append(text)
  return texts


def load(workdir: str) -> tuple[np.ndarray, StateLayout, tables_lib.RollTables,
                                 dict[str, Any]]:
  """Loads a finished run: (W0, layout, roll tables, summary)."""
  path = os.path.join(workdir, "summary.json")
  if not os.path.exists(path):
    raise FileNotFoundError(f"{workdir} holds no finished run (no summary.json)"
                            "; run farkle_jax.main with this --workdir first")
  with open(path) as f:
    summary = json.load(f)
  rules = rules_lib.from_mapping(summary["rules"])
  w0 = np.load(os.path.join(workdir, "start_values.npy"))
  layout = StateLayout(rules)
  return w0, layout, tables_lib.build(rules), summary


def ensure(config: ml_collections.ConfigDict, workdir: str
           ) -> tuple[np.ndarray, StateLayout, tables_lib.RollTables,
                      dict[str, Any]]:
  """Loads the run in `workdir` if it holds these rules solved to the
  config's tolerance (or better); otherwise solves (resuming) and loads."""
  rules, settings = configuration.check(config)
  path = os.path.join(workdir, "summary.json")
  if os.path.exists(path):
    with open(path) as f:
      summary = json.load(f)
    if (summary.get("converged")
        and rules_lib.from_mapping(summary["rules"]) == rules
        and summary["norm"] == settings.norm
        and summary["tol"] <= settings.tol):
      logging.info("using the finished run in %s", workdir)
      return load(workdir)
  run(config, workdir)
  return load(workdir)


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
