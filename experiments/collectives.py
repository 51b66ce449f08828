"""What a wavefront sweep split over several devices exchanges between them,
read off the program XLA compiles for them (CPU host devices: the
partitioning, not the interconnect, decides what moves).

    python experiments/collectives.py --config configs/default.py
    python experiments/collectives.py --config configs/tiny.py:facebook \
        --config.rules.players=3 --config.rules.goal=400 \
        --config.rules.floor=-200

For the method's compiled sweep on `--devices` host devices (the columns
split over them, as `placement.make_mesh` splits them), each collective
operation (all-gather, all-reduce, all-to-all, collective-permute,
reduce-scatter) is listed with its result's shape and bytes, inside a loop
body (a step of the sweep) or not. The loop steps' collectives, once per
dependent step, bound what a sweep moves between devices: printed as an
estimate (the largest step's bytes times the dependent steps a sweep), not
a measurement.
"""

from __future__ import annotations

import os
import re
import sys

_DEVICES = 4   # before JAX starts: --devices is read here too
for arg in sys.argv[1:]:
  if arg.startswith("--devices="):
    _DEVICES = int(arg.split("=", 1)[1])
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_"
                           f"host_platform_device_count={_DEVICES}")

from absl import app, flags  # noqa: E402
from ml_collections import config_flags  # noqa: E402

import farkle_jax  # noqa: E402,F401  (float64)
from farkle_jax.apps import command_line  # noqa: E402
from farkle_jax.game import roll_tables  # noqa: E402
from farkle_jax.game.layout import StateLayout  # noqa: E402
from farkle_jax.game.seats import SeatsLayout  # noqa: E402
from farkle_jax.solver import (configuration, methods,  # noqa: E402
                               seat_wave_engine)

_CONFIG = config_flags.DEFINE_config_file("config", "configs/default.py",
                                          "The solve's config.")
flags.DEFINE_integer("devices", 4, "Host devices the columns split over.")

_OP = re.compile(r"= (\w+)\[([\d,]*)\][^ ]* (all-gather|all-reduce|"
                 r"all-to-all|collective-permute|reduce-scatter)(?:-start)?\(")
_BYTES = {"f64": 8, "s64": 8, "f32": 4, "s32": 4, "pred": 1}


def collectives(hlo: str) -> dict[str, list[tuple[str, str, int]]]:
  """{computation: [(op, shape, bytes)]} of a compiled module's text."""
  found: dict[str, list[tuple[str, str, int]]] = {}
  name = "ENTRY"
  for line in hlo.splitlines():
    if line.startswith(("%", "ENTRY")) and line.rstrip().endswith("{"):
      name = line.split(" ")[0]
    m = _OP.search(line)
    if m:
      dims = [int(d) for d in m.group(2).split(",") if d]
      size = _BYTES.get(m.group(1), 8)
      for d in dims:
        size *= d
      found.setdefault(name, []).append(
          (m.group(3), f"{m.group(1)}[{m.group(2)}]", size))
  return found


def loop_bodies(hlo: str) -> set[str]:
  return set(re.findall(r" while\(.*?body=(%?[\w.\-]+)", hlo))


def compiled_sweep(config) -> tuple[str, int]:
  """(the compiled sweep's HLO text, its dependent steps a sweep)."""
  rules, settings = configuration.check(config)
  settings = settings._replace(method="wavefront")
  if rules.players > 2:
    seats = SeatsLayout(rules)
    lowered = seat_wave_engine.lower_for_target(seats, settings)
    steps = seat_wave_engine.counts(seats, settings).dependent_steps
  else:
    layout = StateLayout(rules, settings.chunk_keys)
    method = methods.build(layout, roll_tables.build(rules), settings)
    lowered = methods.lower_for_target(method, settings)
    steps = method.counts().dependent_steps
  return lowered.compile().as_text(), steps


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  config = _CONFIG.value
  config.solver.method = "wavefront"
  hlo, steps = compiled_sweep(config)
  bodies = loop_bodies(hlo)
  largest = 0
  print(f"# the wavefront's sweep over {_DEVICES} host devices: "
        f"{steps} dependent steps a sweep")
  for name, ops in collectives(hlo).items():
    where = "a loop step" if name in bodies else "once"
    total = sum(b for _, _, b in ops)
    if name in bodies:
      largest = max(largest, total)
    print(f"{where:<12} {total / 1e6:10.1f} MB  " + "; ".join(
        f"{op} {shape}" for op, shape, _ in ops))
  print(f"# estimate, not a measurement: at most {largest / 1e6:.1f} MB a "
        f"step, {largest * steps / 1e9:.1f} GB a sweep between devices")


if __name__ == "__main__":
  command_line.run(main)
