"""Benchmark of the solve methods on one config, in one process.

    python experiments/benchmark.py --config configs/default.py
    python experiments/benchmark.py --config configs/facebook.py --methods ordered

For each method: model states, sweeps to the config's tolerance, state updates
(states evaluated: states x sweeps, plus the ordered method's extra in-stage
Newton evaluations) and updates/s, compile time and solve wall time (timed
separately), XLA's footprint of the compiled chunk, the process's peak host
memory and the device's peak memory where it reports one. The last method
listed is the baseline of the speed-up ratios; all methods must agree.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import farkle_jax  # noqa: E402,F401  (float64)
from farkle_jax import configuration, methods, tables  # noqa: E402
from farkle_jax.layout import StateLayout  # noqa: E402


def load_config(path: str):
  """Loads `configs/x.py[:arg]` like --config does."""
  import importlib.util
  file, _, arg = path.partition(":")
  spec = importlib.util.spec_from_file_location("bench_config", file)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module.get_config(arg) if arg else module.get_config()


def cpu_name() -> str:
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "unknown CPU"


def run_method(name, layout, roll, settings, max_sweeps):
  t0 = time.perf_counter()
  m = methods.METHODS[name](layout, roll, np.dtype(settings.dtype),
                            settings.norm == "relative", max_sweeps,
                            settings.tol, settings.init_value,
                            settings.b_group)
  compile_s = time.perf_counter() - t0
  state = m.init()
  jax.block_until_ready(state)
  t0 = time.perf_counter()
  out = m.run(state, float("inf"), max_sweeps)
  jax.block_until_ready(out.state)
  wall = time.perf_counter() - t0
  dev = jax.devices()[0]
  stats = dev.memory_stats() if dev.platform != "cpu" else None
  return {
      "method": name, "sweeps": out.done, "residual": out.residual,
      "compile_s": compile_s, "wall_s": wall,
      "updates": layout.num_states * out.work,
      "updates_per_s": layout.num_states * out.work / wall,
      "footprint_gb": (m.memory_bytes() or 0) / 2**30,
      "peak_host_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      / 2**20,
      "peak_device_gb": (stats or {}).get("peak_bytes_in_use", 0) / 2**30,
      "w0": m.start_values(out.state),
  }


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--config", default="configs/default.py")
  ap.add_argument("--methods", default="ordered,value_iteration",
                  help="comma-separated; the last is the baseline")
  ap.add_argument("--max_sweeps", type=int, default=500)
  args = ap.parse_args()
  rules, settings = configuration.check(load_config(args.config))
  layout = StateLayout(rules, settings.chunk_keys)
  roll = tables.build(rules)
  dev = jax.devices()[0]
  print(f"# {datetime.date.today()}  {args.config}  rules={rules.name} "
        f"goal={rules.goal} floor={rules.floor}  {settings.norm} tol "
        f"{settings.tol:g}  {settings.dtype}")
  print(f"# backend {jax.default_backend()}: {dev.device_kind} x"
        f"{jax.device_count()}; host {cpu_name()}, {os.cpu_count()} cores")
  print(f"# model states {layout.num_states:,}")
  results = [run_method(name, layout, roll, settings, args.max_sweeps)
             for name in args.methods.split(",")]
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
  main()
