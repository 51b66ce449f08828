"""The wavefront's chunk row cut several ways, timed over a few sweeps.

    python experiments/kernel_tuning.py --config configs/facebook.py
    python experiments/kernel_tuning.py --config configs/default.py \
        --variants=xla:4,pallas:4:128:1:4:1,pallas:1:128:4:4:1 --sweeps=3

Each variant is
`kernel:chunks[:tile:unroll:warps:stages[:held[:per_dice[:split]]]]`:
kernel `xla` (XLA's ops) or `pallas` (the fused kernel,
`solver.wave_kernel`; on a CPU interpreted, a check rather than a speed);
chunks, the loop iterations the widest step is cut into
(`wave_schedule.CHUNKS`); the rest the kernel's `wave_kernel.Tuning` (held
1: `wave_kernel.held_row`, each target read once per tile; its program
names every score set and compiles for an H100 in about 40 s, against
3 s; split 1: a program per tile and dice count). For each: build and
compile times, one sweep as a warm-up, then `--sweeps` sweeps timed, and
the start values' largest difference from the first variant's after the
same sweeps (every variant computes the same sweeps: they differ by
rounding only). A table is printed last; `--json OUT` writes it.
Measured on a GPU: BENCHMARKS.md, "The fused step on a GPU" and "A
program per dice count".
"""

from __future__ import annotations

import collections
import glob
import gzip
import json
import os
import time

import jax
import numpy as np
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import (configuration, methods, wave_kernel,
                               wave_row, wave_schedule)

_CONFIG = config_flags.DEFINE_config_file("config", "configs/facebook.py",
                                          "The solve's config.")
_VARIANTS = flags.DEFINE_list(
    "variants",
    "pallas:2:128:1:4:1,xla:4,pallas:1:128:1:4:1,pallas:2:128:2:4:1,"
    "pallas:2:128:1:2:1,pallas:2:256:1:8:1,pallas:2:64:1:2:1,"
    "pallas:2:128:1:4:2,pallas:2:128:1:4:1:0:0:0,pallas:2:128:1:4:1:1",
    "kernel:chunks[:tile:unroll:warps:stages[:held[:per_dice[:split]]]] "
    "each.")
_SWEEPS = flags.DEFINE_integer("sweeps", 3, "Sweeps timed per variant.")
_JSON = flags.DEFINE_string("json", None, "Write the table here as JSON.")
_PROFILE = flags.DEFINE_string(
    "profile", None, "Trace one more sweep of each variant into this folder "
    "(JAX's profiler) and print where the device's time went.")


def parse(spec: str) -> tuple[str, int, wave_kernel.Tuning]:
  """(kernel, chunks, tuning) of one `--variants` entry."""
  parts = spec.split(":")
  if parts[0] not in ("xla", "pallas") or len(parts) not in (2, 6, 7, 8, 9):
    raise app.UsageError(f"--variants: {spec!r} is not "
                         "kernel:chunks[:tile:unroll:warps:stages"
                         "[:held[:per_dice[:split]]]]")
  numbers = [int(p) for p in parts[1:]]
  if min(numbers[:5]) < 1:
    raise app.UsageError(f"--variants: {spec!r}: chunks, tile, unroll, "
                         "warps and stages are at least 1")
  tuning = wave_kernel.Tuning(*numbers[1:5], *map(bool, numbers[5:])) \
      if len(numbers) > 1 else wave_kernel.Tuning()
  if wave_row.TILE % tuning.tile:
    raise app.UsageError(f"--variants: tile {tuning.tile} must divide "
                         f"{wave_row.TILE} (the chunks' granule)")
  return parts[0], numbers[0], tuning


def run_variant(layout, roll, settings, spec: str) -> dict:
  """Builds, compiles and times one variant."""
  kernel, chunks, tuning = parse(spec)
  wave_schedule.CHUNKS = wave_schedule.KERNEL_CHUNKS = chunks
  wave_kernel.TUNING = tuning
  chosen = settings._replace(method="wavefront", kernel=kernel, tol=0.0,
                             sweeps_per_call=_SWEEPS.value)
  t0 = time.perf_counter()
  method = methods.build(layout, roll, chosen)
  t1 = time.perf_counter()
  chunk = methods.compile_chunk(method, chosen)
  t2 = time.perf_counter()
  first = chunk.run(chunk.method.init(), float("inf"), 1)
  jax.block_until_ready(first.state)
  t3 = time.perf_counter()
  out = chunk.run(first.state, first.residual, _SWEEPS.value)
  jax.block_until_ready(out.state)
  t4 = time.perf_counter()
  plan = chunk.method.counts()
  w0 = np.asarray(chunk.method.start_values(out.state))
  if _PROFILE.value:   # one sweep more (it takes the state: donated)
    folder = os.path.join(_PROFILE.value, spec.replace(":", "_"))
    with jax.profiler.trace(folder, create_perfetto_trace=True):
      jax.block_until_ready(chunk.run(out.state, out.residual, 1).state)
    print_profile(spec, folder)
  return {"variant": spec, "chunk_columns": _chunk_of(layout),
          "build_s": t1 - t0, "compile_s": t2 - t1, "first_sweep_s": t3 - t2,
          "sweeps": out.done, "sweep_s": (t4 - t3) / max(out.done, 1),
          "dependent_steps_per_sweep": plan.dependent_steps,
          "w0": w0}


def print_profile(spec: str, folder: str, top: int = 12) -> None:
  """For the trace's four busiest lines (a GPU's streams, the host's
  threads): events, their summed time and the span they cover; then the
  `top` names by summed time."""
  found = glob.glob(os.path.join(folder, "**", "perfetto_trace.json.gz"),
                    recursive=True)
  if not found:
    print(f"# {spec}: no trace written")
    return
  with gzip.open(found[0]) as f:
    events = json.load(f)["traceEvents"]
  names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
           if e.get("ph") == "M" and e["name"] == "thread_name"}
  lines = collections.defaultdict(list)
  for e in events:
    if e.get("ph") == "X":
      lines[(e["pid"], e.get("tid"))].append(e)
  processes = {e["pid"]: e["args"]["name"] for e in events
               if e.get("ph") == "M" and e["name"] == "process_name"}
  busiest = sorted(lines.items(), key=lambda kv: -len(kv[1]))[:4]
  for key, evs in busiest:
    busy = sum(e["dur"] for e in evs)
    span = max(e["ts"] + e["dur"] for e in evs) - min(e["ts"] for e in evs)
    print(f"# {spec} trace {processes.get(key[0])} "
          f"{names.get(key, key[1])}: {len(evs)} events, "
          f"{busy / 1e3:.1f} ms summed over a span of {span / 1e3:.1f} ms")
    by = collections.Counter()
    count = collections.Counter()
    for e in evs:
      by[e["name"][:60]] += e["dur"]
      count[e["name"][:60]] += 1
    for name, dur in by.most_common(top):
      print(f"#   {dur / 1e3:9.2f} ms {count[name]:7d}x  {name}")


def _chunk_of(layout) -> int:
  """C, the columns of a chunk (as `wavefront.build` cuts them)."""
  return wave_schedule.layout_chunk(layout, wave_row.TILE)[0]


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  for spec in _VARIANTS.value:
    parse(spec)
  rules, settings = configuration.check(_CONFIG.value)
  layout = StateLayout(rules, settings.chunk_keys)
  roll = roll_tables.build(rules)
  dev = jax.devices()[0]
  print(f"# {rules.name} goal={rules.goal} floor={rules.floor}: "
        f"{layout.num_states:,} states; {dev.device_kind}, "
        f"jax {jax.__version__}", flush=True)
  results = []
  for spec in _VARIANTS.value:
    results.append(run_variant(layout, roll, settings, spec))
    r = results[-1]
    print(f"# {spec}: compile {r['compile_s']:.1f} s, "
          f"{r['sweep_s']:.4f} s a sweep", flush=True)
  base = results[0]["w0"]
  print(f"{'variant':<22}{'C':>8}{'dep.steps':>10}{'build s':>8}"
        f"{'compile s':>10}{'1st s':>7}{'s/sweep':>9}{'max|dW0|':>10}")
  for r in results:
    r["max_abs_diff"] = float(np.abs(r.pop("w0") - base).max())
    print(f"{r['variant']:<22}{r['chunk_columns']:>8}"
          f"{r['dependent_steps_per_sweep']:>10}{r['build_s']:>8.1f}"
          f"{r['compile_s']:>10.1f}{r['first_sweep_s']:>7.2f}"
          f"{r['sweep_s']:>9.4f}{r['max_abs_diff']:>10.1e}")
  if _JSON.value:
    with open(_JSON.value, "w") as f:
      json.dump({"rules": rules.name, "device": dev.device_kind,
                 "jax": jax.__version__, "variants": results}, f, indent=1)


if __name__ == "__main__":
  command_line.run(main)
