"""What one sweep of each method moves, and the H100 time it projects,
without solving (docs/model.md §4.4).

    python experiments/gpu_projection.py --config configs/facebook.py \
        --sweeps=19 --json experiments/results/benchmark/facebook_bytes.json

Builds and compiles each method for the config (compile time reported),
reads its counts (`Method.counts`: dependent steps, bytes gathered and
written from its plan, XLA's bytes accessed of its loop bodies at their trip
counts) and projects a solve of `--sweeps` sweeps on an H100:

    seconds = sweeps x ((gathered + written) / 3.35 TB/s + steps x 8 us)

(and the same with XLA's bytes). The sweep count is an input: a GPU run, or
`experiments/benchmark.py`, measures it. A projection, not a measurement.
"""

from __future__ import annotations

import datetime
import json
import os
import time

import jax
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import configuration, methods, sweep_counts

VARIANTS = {"ordered-plain": {"method": "ordered", "newton": False},
            "ordered-newton": {"method": "ordered", "newton": True},
            "ordered-accelerator": {"method": "ordered", "newton": False,
                                    "b_group": -1}}


def counts_of(layout, roll, settings, label, sweeps):
  """Builds and compiles one method; its counts and projection."""
  if settings.b_group == -1:   # one sub-batch per stage, as on a GPU
    settings = settings._replace(b_group=layout.num_scores)
  t0 = time.perf_counter()
  method = methods.build(layout, roll, settings)
  build_s = time.perf_counter() - t0
  t0 = time.perf_counter()
  methods.compile_chunk(method, settings)
  compile_s = time.perf_counter() - t0
  c = method.counts()
  return {
      "method": label, "build_s": build_s, "compile_s": compile_s,
      "dependent_steps_per_sweep": c.dependent_steps,
      "gathered_bytes_per_sweep": c.gathered_bytes,
      "written_bytes_per_sweep": c.written_bytes,
      "xla_bytes_accessed_per_sweep": c.xla_bytes_accessed,
      "rows_evaluated_per_sweep": c.column_steps,
      "live_rows_per_sweep": c.live_rows,
      "sweeps_assumed": sweeps,
      "projected_h100_seconds": sweep_counts.projected_seconds(c, sweeps),
      "projected_h100_seconds_from_xla": sweep_counts.projected_seconds(
          c, sweeps, xla=True)}


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  allowed = configuration.METHODS + tuple(VARIANTS)
  for name in _METHODS.value:
    if name not in allowed:
      raise app.UsageError(f"--methods: {name!r} is not one of {allowed}")
  rules, settings = configuration.check(_CONFIG.value)
  layout = StateLayout(rules, settings.chunk_keys)
  roll = roll_tables.build(rules)
  config_file = config_flags.get_config_filename(flags.FLAGS["config"])
  print(f"# {datetime.date.today()}  {config_file}  rules={rules.name} "
        f"goal={rules.goal} floor={rules.floor}  {settings.dtype}; "
        f"{layout.num_states:,} model states; {_SWEEPS.value} sweeps assumed")
  print(f"# compiled on {jax.default_backend()} x{jax.device_count()}, "
        f"{os.cpu_count()} cores")
  rows = [counts_of(layout, roll, settings._replace(
      **{"method": name, **VARIANTS.get(name, {})}), name, _SWEEPS.value)
          for name in _METHODS.value]
  print(f"{'method':<20}{'dep.steps':>10}{'rows/live':>10}"
        f"{'gathered':>12}{'written':>11}{'XLA bytes':>12}{'compile s':>10}"
        f"{'H100 s':>9}{'(XLA)':>9}")
  for r in rows:
    print(f"{r['method']:<20}{r['dependent_steps_per_sweep']:>10}"
          f"{r['rows_evaluated_per_sweep'] / r['live_rows_per_sweep']:>10.2f}"
          f"{r['gathered_bytes_per_sweep'] / 1e9:>10.4g}GB"
          f"{r['written_bytes_per_sweep'] / 1e9:>9.4g}GB"
          f"{r['xla_bytes_accessed_per_sweep'] / 1e9:>10.4g}GB"
          f"{r['compile_s']:>10.1f}{r['projected_h100_seconds']:>9.3g}"
          f"{r['projected_h100_seconds_from_xla']:>9.3g}")
  print("# bytes per sweep; H100 s: the whole solve after compilation, a "
        "projection: sweeps x ((gathered + written) / 3.35 TB/s + steps x "
        "8 us); (XLA): with XLA's bytes accessed")
  if _JSON.value:
    os.makedirs(os.path.dirname(os.path.abspath(_JSON.value)), exist_ok=True)
    with open(_JSON.value, "w") as f:
      json.dump({"date": str(datetime.date.today()), "config": config_file,
                 "rules": rules.to_dict(), "model_states": layout.num_states,
                 "backend": jax.default_backend(), "methods": rows}, f,
                indent=1)
    print(f"# wrote {_JSON.value}")


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/facebook.py", "Config file.", lock_config=True)
  _METHODS = flags.DEFINE_list(
      "methods", ["wavefront", "ordered-accelerator"],
      "Methods to count (ordered-accelerator: one sub-batch per stage, "
      "the ordered method's setting on a GPU).")
  _SWEEPS = flags.DEFINE_integer("sweeps", 19, "Sweeps of the solve the "
                                 "projection assumes.", lower_bound=1)
  _JSON = flags.DEFINE_string("json", None, "Also write the counts here.")
  command_line.run(main)
