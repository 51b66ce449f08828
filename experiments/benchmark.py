"""Benchmark of the solve methods on one config, in one process.

    python experiments/benchmark.py --config configs/default.py
    python experiments/benchmark.py --config configs/facebook.py \
        --methods=ordered --json runs/bench_facebook.json

For each method: model states, sweeps to the config's tolerance, state updates
(states evaluated: states x sweeps, plus the ordered method's extra in-stage
Newton evaluations) and updates/s, compile time and solve wall time (timed
separately), dependent loop steps per sweep (`solver.loop_steps` reads them
from the program's loops while it runs the first sweep, and they must equal
what the method counts itself), XLA's footprint of the compiled chunk, the
process's peak host memory and the device's peak memory where it reports
one. `--json OUT` writes the same per method. The last method
listed is the baseline of the speed-up ratios; all methods must agree.
`ordered-newton` and `ordered-plain` are the ordered method with and without
its Newton step (`--config.solver.newton=True|False`; `ordered` takes the
config's setting), `wavefront-newton` the wavefront with its own (exits
refreshed where they pay; a refresh counts two evaluations of every state
and its loop steps in the run's totals, not in the per-sweep counts, and
its bytes and steps, with the corrections' steps, in the projection),
`ordered-accelerator` the plain ordered method with one
sub-batch per stage (its setting on a GPU); `wavefront-xla` and
`wavefront-pallas` the wavefront with a chunk's row in XLA's ops or in the
fused kernel (`--config.solver.kernel`; on a CPU the kernel runs
interpreted: a check, not a speed). `seats` solves the same rules
with the N-player stage engine as the main job runs it
(`--config.solver.method=seats`): with two players, its seat-vector pass
per state update against the two-player engines' in the same process (its
compile s: the run's time outside its sweeps; wall s: its sweeps, their
Newton steps included; its counts from the sizes, `solver.seat_counts`:
loop steps and the plan's bytes of one turn pass per stage, not the
Newton step's exits and corrections, no XLA bytes;
with --target, its sweep (one compiled loop) compiled for the GPU, its
compile time and kernels; not first, except with --counts_only, which counts
any number of players); `seats-plain` and `seats-newton` the same
without and with its Newton step (`seats` takes the config's setting,
by default the step under a penalty); `seats-wavefront` the wavefront for
N players (`solver.seat_wavefront`; its counts from its schedule,
`solver.seat_wave_schedule`):

    python experiments/benchmark.py --config configs/default.py \
        --methods=ordered,seats,wavefront

Config fields can be overridden like the solver's, e.g.
`--config.rules.goal=2000`.

Every method also reports what one sweep moves and waits on
(`Method.counts`, docs/model.md §4.4): dependent steps, bytes gathered and
written from its plan, XLA's bytes accessed of its loop bodies at their
trip counts, and the projected H100 time of the solve,
sweeps x ((gathered + written) / 3.35 TB/s + steps x 8 us), a projection,
not a measurement. `--counts_only --sweeps=N` builds and compiles each
method without solving and projects a solve of N sweeps (a model too large
to solve here):

    python experiments/benchmark.py --config configs/facebook.py \
        --counts_only --sweeps=19 --methods=wavefront,ordered-accelerator

`--target=h100` also compiles each method for an H100 without one
(deviceless ahead-of-time compilation, `solver.compile_target`; it needs a
Python with JAX's CUDA plugin, `bash experiments/deviceless_setup.sh`, and
JAX_PLATFORMS=cpu) and adds per method `h100_compile_s`, `h100_fusions`
(the GPU program's kernels), `h100_dependent_steps_per_sweep` and
`h100_bytes_accessed_per_sweep` (XLA's cost analysis of the GPU program,
loop bodies at their trip counts, plus the Pallas kernels' own bytes,
`h100_kernel_bytes_per_sweep`, which XLA does not see) and
`h100_kernel_registers` (each Pallas kernel's registers a thread, by
ptxas, which bound how many of its blocks a multiprocessor holds):

    PY=$(bash experiments/deviceless_setup.sh)
    JAX_PLATFORMS=cpu $PY experiments/benchmark.py --config configs/facebook.py \
        --counts_only --methods=wavefront-xla,wavefront-pallas --target=h100

Compile times here are cold: the benchmark does not use the solver's
persistent compilation cache (unless JAX_COMPILATION_CACHE_DIR says so).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import tempfile
import time

import jax
import numpy as np
from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (compile_target, configuration, driver,
                               loop_steps, methods, seat_counts,
                               seat_wave_engine, stage_engine, sweep_counts)


def cpu_name() -> str:
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "unknown CPU"


VARIANTS = {"ordered-plain": {"method": "ordered", "newton": False},
            "ordered-newton": {"method": "ordered", "newton": True},
            "ordered-accelerator": {"method": "ordered", "newton": False,
                                    "b_group": "stage"},
            "wavefront-newton": {"method": "wavefront", "newton": True},
            "wavefront-xla": {"method": "wavefront", "kernel": "xla"},
            "wavefront-pallas": {"method": "wavefront", "kernel": "pallas"}}


def variant(name: str, settings, layout):
  """The settings of method or variant `name`."""
  changes = {"method": name, **VARIANTS.get(name, {})}
  if changes.get("b_group") == "stage":   # one sub-batch per stage
    changes["b_group"] = layout.num_scores
  return settings._replace(**changes)


def counted(method, sweeps: int) -> dict:
  """What one sweep of `method` moves, and the projection of `sweeps`."""
  return counts_of(method.counts(), sweeps)


def counts_of(c: sweep_counts.SweepCounts, sweeps: int) -> dict:
  """The figures of counts `c`; XLA's projection None where XLA's bytes
  were not counted."""
  return {
      "dependent_steps_per_sweep": c.dependent_steps,
      "gathered_bytes_per_sweep": c.gathered_bytes,
      "written_bytes_per_sweep": c.written_bytes,
      "xla_bytes_accessed_per_sweep": c.xla_bytes_accessed,
      "rows_evaluated_per_sweep": c.column_steps,
      "live_rows_per_sweep": c.live_rows,
      "kernel_rows_per_sweep": c.kernel_rows or None,
      "projected_h100_seconds": sweep_counts.projected_seconds(c, sweeps),
      "projected_h100_seconds_from_xla": sweep_counts.projected_seconds(
          c, sweeps, xla=True) if c.xla_bytes_accessed else None}


def seat_counted(config, sweeps: int) -> dict:
  """The stage engine's sweep counted from the sizes (`solver.seat_counts`,
  on this process's devices; XLA's bytes not counted), the projection of
  `sweeps`; with `--target`, its sweep compiled for that GPU. For the
  N-player wavefront, its schedule's counts and XLA's bytes
  (`seat_wave_engine.counts`)."""
  seats, settings = stage_engine.check(config)
  if settings.method == "wavefront":
    return {**counts_of(seat_wave_engine.counts(seats, settings), sweeps),
            **seat_target_figures(seats, settings, _TARGET.value)}
  group = stage_engine.group_size(settings, seats)
  return {**counts_of(seat_counts.sweep(seats, group, jax.device_count())
                      .counts, sweeps),
          **seat_target_figures(seats, settings, _TARGET.value)}


def count_seats(config, label: str, sweeps: int) -> dict:
  """`--counts_only` for a stage engine variant: its counts, no solve."""
  return {"method": label, "build_s": 0.0, "compile_s": 0.0,
          "sweeps": sweeps, **seat_counted(seat_config(config, label),
                                           sweeps)}


def seat_target_figures(seats, settings, target: str | None) -> dict:
  """`--target` for an N-player engine: its sweep compiled for that GPU
  without one (`compile_for_target`): compile time and kernels; for the
  wavefront, XLA's bytes and its kernels' (none counted for the stage
  engine)."""
  if not target:
    return {}
  wave = settings.method == "wavefront"
  engine = seat_wave_engine if wave else stage_engine
  with compile_target.aiming(target):
    out = compiled_figures(
        lambda: engine.lower_for_target(seats, settings), target)
    counts = seat_wave_engine.counts(seats, settings) if wave else None
  if counts is None:
    return out
  return {**out,
          f"{target}_dependent_steps_per_sweep": counts.dependent_steps,
          f"{target}_bytes_accessed_per_sweep": counts.xla_bytes_accessed,
          f"{target}_kernel_bytes_per_sweep": counts.kernel_bytes}


def with_refreshes(method, sweeps: int, work: float, steps: int) -> dict:
  """For a method whose Newton step refreshes its exits beside some sweeps
  (each refresh two evaluations of every state): the refreshes run and the
  projection of the whole run, refreshes and the correction's loop steps
  (the run's steps beyond its sweeps' and refreshes') included."""
  if method.refresh_counts is None:
    return {}
  c, r = method.counts(), method.refresh_counts()
  refreshes = round((work - sweeps) / 2)
  rest = steps - sweeps * c.dependent_steps - refreshes * r.dependent_steps
  extra = (sweep_counts.projected_seconds(r, refreshes)
           + rest * sweep_counts.LOOP_STEP_S)
  extra_xla = (sweep_counts.projected_seconds(r, refreshes, xla=True)
               + rest * sweep_counts.LOOP_STEP_S)
  return {"refreshes": refreshes,
          "refresh_dependent_steps": r.dependent_steps,
          "refresh_gathered_bytes": r.gathered_bytes,
          "correction_dependent_steps": rest,
          "projected_h100_seconds": sweep_counts.projected_seconds(
              c, sweeps) + extra,
          "projected_h100_seconds_from_xla": sweep_counts.projected_seconds(
              c, sweeps, xla=True) + extra_xla}


def count_method(layout, roll, settings, label, sweeps):
  """Builds and compiles one method without solving: compile time and
  counts, the projection assuming `sweeps` sweeps."""
  t0 = time.perf_counter()
  method = methods.build(layout, roll, settings)
  t1 = time.perf_counter()
  chunk = methods.compile_chunk(method, settings)
  return {"method": label, "build_s": t1 - t0,
          "compile_s": time.perf_counter() - t1,
          "sweeps": sweeps, **counted(chunk.method, sweeps),
          **target_figures(layout, roll, settings, _TARGET.value)}


def target_figures(layout, roll, settings, target: str | None) -> dict:
  """`--target`: the method compiled for that GPU without one (compile
  time, kernels, XLA's bytes accessed per sweep with loop bodies at their
  trip counts), as `<target>_compile_s`, `_fusions`,
  `_bytes_accessed_per_sweep`."""
  if not target:
    return {}
  with compile_target.aiming(target):
    method = methods.build(layout, roll, settings)
    out = compiled_figures(
        lambda: methods.lower_for_target(method, settings), target)
    counts = method.counts()
  return {**out,
          f"{target}_dependent_steps_per_sweep": counts.dependent_steps,
          f"{target}_bytes_accessed_per_sweep": counts.xla_bytes_accessed,
          f"{target}_kernel_bytes_per_sweep": counts.kernel_bytes}


def compiled_figures(lower, target: str) -> dict:
  """`lower()` (a sweep lowered for the target) compiled: the time of
  both, the program's kernels, and the registers a thread of each of its
  Pallas kernels (`compile_target.kernel_registers`: compiled once more
  where it has any)."""
  t0 = time.perf_counter()
  lowered = lower()
  text = lowered.compile().as_text()
  seconds = time.perf_counter() - t0
  kernels = any(name in text for name in compile_target.KERNELS)
  return {f"{target}_compile_s": seconds,
          f"{target}_fusions": compile_target.fusions(text),
          f"{target}_kernel_registers":
              compile_target.kernel_registers(lowered) if kernels else {}}


def print_target(results, target: str | None) -> None:
  if not target:
    return
  print(f"# compiled for {target} without the GPU (deviceless AOT): bytes "
        "are XLA's HLO cost analysis, loop bodies at their trip counts, plus "
        "the Pallas kernels' own from their plans (of which: kernels)")
  print(f"{'method':<20}{'compile s':>10}{'fusions':>9}{'dep.steps':>10}"
        f"{'bytes/sweep':>14}{'(kernels)':>12}{'plan bytes/sweep':>18}"
        f"{'ratio':>7}")
  for r in results:
    if f"{target}_bytes_accessed_per_sweep" not in r:   # the stage engine
      print(f"{r['method']:<20}{r[f'{target}_compile_s']:>10.1f}"
            f"{r[f'{target}_fusions']:>9}{'-':>10}{'-':>14}{'-':>12}"
            f"{'-':>18}{'-':>7}")
      continue
    plan = r["gathered_bytes_per_sweep"] + r["written_bytes_per_sweep"]
    xla = r[f"{target}_bytes_accessed_per_sweep"]
    print(f"{r['method']:<20}{r[f'{target}_compile_s']:>10.1f}"
          f"{r[f'{target}_fusions']:>9}"
          f"{r[f'{target}_dependent_steps_per_sweep']:>10}{xla / 1e9:>12.4g}GB"
          f"{r[f'{target}_kernel_bytes_per_sweep'] / 1e9:>10.4g}GB"
          f"{plan / 1e9:>16.4g}GB{xla / plan:>7.2f}")
  for r in results:
    if r.get(f"{target}_kernel_registers"):
      print(f"# {r['method']}: registers a thread (ptxas), " + ", ".join(
          f"{k} {v}" for k, v in r[f"{target}_kernel_registers"].items()))


def print_counts(results) -> None:
  print(f"{'method':<20}{'build s':>8}{'compile s':>10}{'dep.steps':>10}"
        f"{'rows/sweep':>12}"
        f"{'live rows':>12}"
        f"{'gathered/sweep':>16}{'written/sweep':>15}{'XLA bytes/sweep':>17}"
        f"{'H100 s':>9}{'(XLA)':>9}")
  for r in results:
    xla = r["projected_h100_seconds_from_xla"]
    print(f"{r['method']:<20}{r['build_s']:>8.1f}{r['compile_s']:>10.1f}"
          f"{r['dependent_steps_per_sweep']:>10}"
          f"{r['rows_evaluated_per_sweep']:>12.4g}"
          f"{r['live_rows_per_sweep']:>12.4g}"
          f"{r['gathered_bytes_per_sweep'] / 1e9:>14.4g}GB"
          f"{r['written_bytes_per_sweep'] / 1e9:>13.4g}GB"
          f"{r['xla_bytes_accessed_per_sweep'] / 1e9:>15.4g}GB"
          f"{r['projected_h100_seconds']:>9.3g}"
          f"{'-' if xla is None else format(xla, '.3g'):>9}")
  print("# H100 projection (not a measurement) of the solve after "
        "compilation: sweeps x ((gathered + written) / 3.35 TB/s + "
        "dependent steps x 8 us); (XLA): with XLA's bytes accessed, which "
        "charge each fusion whole arrays")
  for r in results:
    if r.get("kernel_rows_per_sweep"):
      print(f"# {r['method']}: the fused kernel computes "
            f"{r['kernel_rows_per_sweep']:.4g} of the rows (the tiles "
            "with a live column; it skips the others)")
    if r.get("refreshes") is not None:
      print(f"# {r['method']}: {r['refreshes']} exit refresh(es) of "
            f"{r['refresh_dependent_steps']:,} dependent steps and "
            f"{r['refresh_gathered_bytes'] / 1e9:.4g} GB gathered each, "
            f"{r['correction_dependent_steps']:,} steps of corrections, "
            "all in its projection")


def run_method(layout, roll, settings, label):
  """Builds, compiles and runs `settings.method` in one chunk of up to
  `settings.sweeps_per_call` sweeps (stopping at the tolerance)."""
  t0 = time.perf_counter()
  method = methods.build(layout, roll, settings)
  t1 = time.perf_counter()
  chunk = methods.compile_chunk(method, settings)
  build_s, compile_s = t1 - t0, time.perf_counter() - t1
  method = chunk.method
  state = method.init()
  try:
    read = loop_steps.count(method.sweep, state, method.tables)
  except NotImplementedError as e:
    logging.warning("%s: no count from the loop structure (%s); the "
                    "method's own count stands", method.name, e)
    read = None
  state = method.init()
  jax.block_until_ready(state)
  t0 = time.perf_counter()
  first = chunk.run(state, float("inf"), 1)
  out = chunk.run(first.state, first.residual, settings.sweeps_per_call - 1)
  jax.block_until_ready(out.state)
  wall = time.perf_counter() - t0
  if read is None:
    read = first.steps
  elif read != first.steps:
    raise RuntimeError(f"{method.name}: the loop structure gives {read} "
                       f"dependent steps for sweep 1, the method {first.steps}")
  dev = jax.devices()[0]
  stats = dev.memory_stats() if dev.platform != "cpu" else None
  sweeps, work = first.done + out.done, first.work + out.work
  return {
      **counted(method, sweeps),
      **with_refreshes(method, sweeps, work, first.steps + out.steps),
      "method": label, "sweeps": sweeps,
      "residual": out.residual if out.done else first.residual,
      "build_s": build_s, "compile_s": compile_s, "wall_s": wall,
      "state_updates": layout.num_states * work,
      "updates_per_s": layout.num_states * work / wall,
      "dependent_steps_per_sweep": read,
      "dependent_steps_all_sweeps": first.steps + out.steps,
      "footprint_gb": (chunk.memory_bytes() or 0) / 2**30,
      "peak_host_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      / 2**20,
      "peak_device_gb": (stats or {}).get("peak_bytes_in_use", 0) / 2**30,
      "w0": method.start_values(out.state),
      **target_figures(layout, roll, settings, _TARGET.value),
  }


# The stage engine's runs: `solver.newton` as the config has it, off, on.
# ... and the N-player wavefront (`solver.seat_wavefront`).
SEAT_WAVEFRONT = "seats-wavefront"
SEAT_VARIANTS = {configuration.SEATS: "config", "seats-plain": False,
                 "seats-newton": True, SEAT_WAVEFRONT: "config"}


def seat_config(config, label: str):
  """The config of stage engine variant `label`."""
  config = config.copy_and_resolve_references()
  with config.unlocked():
    config.solver.method = ("wavefront" if label == SEAT_WAVEFRONT
                            else configuration.SEATS)
    config.solver.max_iterations = _MAX_SWEEPS.value
    if SEAT_VARIANTS[label] != "config":
      config.solver.newton = SEAT_VARIANTS[label]
  return config


def run_seats(config, label: str, reference_shape) -> dict:
  """The N-player stage engine (`solver.method = "seats"`) on the same
  rules, as the main job runs it in a scratch workdir: with two players,
  the seat-vector pass against the two-player engines per state update."""
  config = seat_config(config, label)
  with tempfile.TemporaryDirectory() as workdir:
    t0 = time.perf_counter()
    summary = driver.run(config, workdir)
    wall = time.perf_counter() - t0
    w = np.load(os.path.join(workdir, "start_values.npy"))[..., 0]
  sweep_s = summary["sweep_seconds"]
  return {
      "method": label, "sweeps": summary["iterations"],
      "residual": summary["final_residual"], "build_s": 0.0,
      "compile_s": wall - sweep_s, "wall_s": sweep_s,
      "state_updates": summary["state_updates"],
      "updates_per_s": summary["state_updates"] / sweep_s,
      "stage_passes_per_sweep": summary["turn_passes"]
                                // summary["iterations"],
      "footprint_gb": summary["memory_estimate_bytes"] / 2**30,
      "peak_host_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      / 2**20,
      "peak_device_gb": 0.0,
      "w0": w.reshape(reference_shape) if w.size == np.prod(
          reference_shape) else np.full(reference_shape, np.nan),
      **seat_counted(config, summary["iterations"])}


def model_states(rules, layout) -> int:
  """The model's states: the N-player layout's for more than two
  players (the two-player layout then sizes nothing the run solves)."""
  if rules.players > 2:
    return SeatsLayout(rules).num_states
  return layout.num_states


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  allowed = configuration.METHODS + tuple(VARIANTS) + tuple(SEAT_VARIANTS)
  for name in _METHODS.value:
    if name not in allowed:
      raise app.UsageError(f"--methods: {name!r} is not one of {allowed}")
  if _METHODS.value[0] in SEAT_VARIANTS and not _COUNTS_ONLY.value:
    raise app.UsageError("--methods: 'seats' needs a two-player method "
                         "before it (the baseline of its solve)")
  if _TARGET.value:
    compile_target.check(_TARGET.value)
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
  print(f"# model states {model_states(rules, layout):,}"
        + (f" ({rules.players} players)" if rules.players > 2 else ""))
  if _COUNTS_ONLY.value:
    print(f"# counts only, no solve: {_SWEEPS.value} sweeps assumed")
    results = [count_seats(_CONFIG.value, name, _SWEEPS.value)
               if name in SEAT_VARIANTS else
               count_method(layout, roll, variant(name, settings, layout),
                            name, _SWEEPS.value) for name in _METHODS.value]
    print_counts(results)
    print_target(results, _TARGET.value)
    write_json(results, rules, settings, layout, config_file, dev)
    return
  sweeps = {"sweeps_per_call": _MAX_SWEEPS.value}
  results = []
  for name in _METHODS.value:
    if name in SEAT_VARIANTS:
      results.append(run_seats(_CONFIG.value, name, results[0]["w0"].shape))
      continue
    results.append(run_method(layout, roll, variant(name, settings, layout)
                              ._replace(**sweeps), name))
  base = results[-1]
  print_solves(results, base)
  print_counts(results)
  print_target(results, _TARGET.value)
  write_json([{**{k: v for k, v in r.items() if k != "w0"},
               "max_abs_diff_from_baseline":
                   float(np.abs(r["w0"] - base["w0"]).max())}
              for r in results], rules, settings, layout, config_file, dev)


def print_solves(results, base) -> None:
  """The solve table: each method's run against the baseline's."""
  head = (f"{'method':<16}{'sweeps':>7}{'updates':>12}{'updates/s':>11}"
          f"{'dep.steps':>10}"
          f"{'compile s':>10}{'wall s':>9}{'footprint':>10}{'peak host':>10}"
          f"{'peak dev':>9}{'x updates':>10}{'x wall':>8}{'max|dW0|':>10}")
  print(head)
  for r in results:
    print(f"{r['method']:<16}{r['sweeps']:>7}{r['state_updates']:>12.3g}"
          f"{r['updates_per_s']:>11.3g}{r['dependent_steps_per_sweep']:>10}"
          f"{r['compile_s']:>10.1f}"
          f"{r['wall_s']:>9.1f}{r['footprint_gb']:>9.2f}G"
          f"{r['peak_host_gb']:>9.2f}G{r['peak_device_gb']:>8.2f}G"
          f"{base['state_updates'] / r['state_updates']:>10.1f}"
          f"{base['wall_s'] / r['wall_s']:>8.1f}"
          f"{np.abs(r['w0'] - base['w0']).max():>10.1e}")
  print("# peak host is the process's peak so far (cumulative over rows)")


def write_json(results, rules, settings, layout, config_file, dev) -> None:
  """`--json`: the figures of every method, with the run's setting."""
  if not _JSON.value:
    return
  record = {
      "date": str(datetime.date.today()), "config": config_file,
      "rules": rules.to_dict(), "tol": settings.tol, "norm": settings.norm,
      "dtype": settings.dtype, "model_states": model_states(rules, layout),
      "backend": jax.default_backend(), "device": dev.device_kind,
      "devices": jax.device_count(), "host": cpu_name(),
      "cores": os.cpu_count(), "methods": results}
  os.makedirs(os.path.dirname(os.path.abspath(_JSON.value)), exist_ok=True)
  with open(_JSON.value, "w") as f:
    json.dump(record, f, indent=1)
  print(f"# wrote {_JSON.value}")


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/default.py", "Config file, e.g. configs/default.py.",
      lock_config=True)
  _METHODS = flags.DEFINE_list("methods", ["ordered", "value_iteration"],
                               "Solve methods; the last is the baseline.")
  _MAX_SWEEPS = flags.DEFINE_integer("max_sweeps", 500, "Most sweeps a "
                                     "method runs (one compiled chunk).",
                                     lower_bound=1)
  _JSON = flags.DEFINE_string("json", None, "Also write the figures to "
                              "this JSON file.")
  _COUNTS_ONLY = flags.DEFINE_boolean(
      "counts_only", False, "Build and compile each method, report what a "
      "sweep moves and the projection of --sweeps sweeps; no solve.")
  _SWEEPS = flags.DEFINE_integer("sweeps", 19, "Sweeps the projection of "
                                 "--counts_only assumes.", lower_bound=1)
  _TARGET = flags.DEFINE_string(
      "target", None, "Also compile each method for this GPU without one "
      f"(known: {', '.join(sorted(compile_target.TARGETS))}; needs JAX's "
      "CUDA plugin and JAX_PLATFORMS=cpu) and report its compile time, "
      "kernels and XLA's bytes accessed per sweep.")
  command_line.run(main)
