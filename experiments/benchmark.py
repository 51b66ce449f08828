"""Benchmark of the solve methods on one config, in one process.

    python experiments/benchmark.py --config configs/default.py
    python experiments/benchmark.py --config configs/facebook.py \
        --methods=ordered

For each method: model states, sweeps to the config's tolerance, state updates
(states evaluated: states x sweeps, plus the ordered method's extra in-stage
Newton evaluations) and updates/s, compile time and solve wall time (timed
separately), XLA's footprint of the compiled chunk, the process's peak host
memory and the device's peak memory where it reports one. The last method
listed is the baseline of the speed-up ratios; all methods must agree.
Config fields can be overridden like the solver's, e.g.
`--config.rules.goal=2000`.
"""

from __future__ import annotations

import datetime
import os
import platform
import resource
import time

import jax
import numpy as np
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import configuration, methods


def cpu_name() -> str:
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "unknown CPU"


def run_method(layout, roll, settings):
  """Builds, compiles and runs `settings.method` in one chunk of up to
  `settings.sweeps_per_call` sweeps (stopping at the tolerance)."""
  t0 = time.perf_counter()
  chunk = methods.compile_chunk(methods.build(layout, roll, settings),
                                settings)
  compile_s = time.perf_counter() - t0
  state = chunk.method.init()
  jax.block_until_ready(state)
  t0 = time.perf_counter()
  out = chunk.run(state, float("inf"), settings.sweeps_per_call)
  jax.block_until_ready(out.state)
  wall = time.perf_counter() - t0
  dev = jax.devices()[0]
  stats = dev.memory_stats() if dev.platform != "cpu" else None
  return {
      "method": settings.method, "sweeps": out.done,
      "residual": out.residual, "compile_s": compile_s, "wall_s": wall,
      "updates": layout.num_states * out.work,
      "updates_per_s": layout.num_states * out.work / wall,
      "footprint_gb": (chunk.memory_bytes() or 0) / 2**30,
      "peak_host_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      / 2**20,
      "peak_device_gb": (stats or {}).get("peak_bytes_in_use", 0) / 2**30,
      "w0": chunk.method.start_values(out.state),
  }


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  for name in _METHODS.value:
    if name not in configuration.METHODS:
      raise app.UsageError(f"--methods: {name!r} is not one of "
                           f"{configuration.METHODS}")
  rules, settings = configuration.check(_CONFIG.value)
  layout = StateLayout(rules, settings.chunk_keys)
  roll = roll_tables.build(rules)
  dev = jax.devices()[0]
  config_file = config_flags.get_config_filename(flags.FLAGS["config"])
  print(f"# {datetime.date.today()}  {config_file}  rules={rules.name} "
        f"goal={rules.goal} floor={rules.floor}  {settings.norm} tol "
        f"{settings.tol:g}  {settings.dtype}")
  print(f"# backend {jax.default_backend()}: {dev.device_kind} x"
        f"{jax.device_count()}; host {cpu_name()}, {os.cpu_count()} cores")
  print(f"# model states {layout.num_states:,}")
  results = [run_method(layout, roll, settings._replace(
      method=name, sweeps_per_call=_MAX_SWEEPS.value))
             for name in _METHODS.value]
  base = results[-1]
  head = (f"{'method':<16}{'sweeps':>7}{'updates':>12}{'updates/s':>11}"
          f"{'compile s':>10}{'wall s':>9}{'footprint':>10}{'peak host':>10}"
          f"{'peak dev':>9}{'x updates':>10}{'x wall':>8}{'max|dW0|':>10}")
  print(head)
  for r in results:
    print(f"{r['method']:<16}{r['sweeps']:>7}{r['updates']:>12.3g}"
          f"{r['updates_per_s']:>11.3g}{r['compile_s']:>10.1f}"
          f"{r['wall_s']:>9.1f}{r['footprint_gb']:>9.2f}G"
          f"{r['peak_host_gb']:>9.2f}G{r['peak_device_gb']:>8.2f}G"
          f"{base['updates'] / r['updates']:>10.1f}"
          f"{base['wall_s'] / r['wall_s']:>8.1f}"
          f"{np.abs(r['w0'] - base['w0']).max():>10.1e}")
  print("# peak host is the process's peak so far (cumulative over rows)")


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/default.py", "Config file, e.g. configs/default.py.",
      lock_config=True)
  _METHODS = flags.DEFINE_list("methods", ["ordered", "value_iteration"],
                               "Solve methods; the last is the baseline.")
  _MAX_SWEEPS = flags.DEFINE_integer("max_sweeps", 500, "Most sweeps a "
                                     "method runs (one compiled chunk).")
  command_line.run(main)
