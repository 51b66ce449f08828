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
body (a chunk's step, a move, a finishing group) or not. The largest loop
step's bytes times the dependent steps a sweep bound what a sweep moves
between devices: printed as an estimate, an upper bound (the moves, which
carry the most, run once per chunk of a segment, not at every step), not
a measurement.

    python experiments/collectives.py --layouts

compares, on the same devices, the two layouts of a ring for one chunk's
step (read 102 rows of C columns at a run-time offset, write one row):
split along its columns (the wavefront's first layout), and laid out
`[devices, columns per device]`, each chunk a slice of every device's
block (its layout now, `solver/wave_columns.py`, docs/model.md §4.3): the
collectives each compiles to.
"""

from __future__ import annotations

import os
import re
import sys


def _devices_asked(argv: list[str], default: int = 4) -> int:
  """--devices, read before JAX starts (its host devices are fixed then);
  a value that is not a positive integer is left to the flag's own
  check, which refuses it in one line before any work."""
  for i, arg in enumerate(argv):
    value = (arg.split("=", 1)[1] if arg.startswith("--devices=") else
             argv[i + 1] if arg == "--devices" and i + 1 < len(argv) else
             None)
    if value is not None:
      return int(value) if value.isdigit() and int(value) > 0 else default
  return default


_DEVICES = _devices_asked(sys.argv[1:])
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_"
                           f"host_platform_device_count={_DEVICES}")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402
from ml_collections import config_flags  # noqa: E402

import farkle_jax  # noqa: E402,F401  (float64)
from farkle_jax.apps import command_line  # noqa: E402
from farkle_jax.game import roll_tables  # noqa: E402
from farkle_jax.game.layout import StateLayout  # noqa: E402
from farkle_jax.game.seats import SeatsLayout  # noqa: E402
from farkle_jax.solver import (configuration, methods,  # noqa: E402
                               seat_wave_engine, seat_wave_schedule)

_CONFIG = config_flags.DEFINE_config_file("config", "configs/default.py",
                                          "The solve's config.")
flags.DEFINE_integer("devices", 4, "Host devices the columns split over.",
                     lower_bound=1)
_LAYOUTS = flags.DEFINE_bool("layouts", False, "Compare the two layouts "
                             "of a ring for a chunk's step instead.")

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
    # From the sizes: the engine's counts would compile every loop body
    # again for XLA's bytes.
    steps = seat_wave_schedule.plan(seats, _DEVICES).counts.dependent_steps
  else:
    layout = StateLayout(rules, settings.chunk_keys)
    method = methods.build(layout, roll_tables.build(rules), settings)
    lowered = methods.lower_for_target(method, settings)
    steps = method.counts().dependent_steps
  return lowered.compile().as_text(), steps


def chunk_steps(blocked: bool, rows: int = 486, width: int = 26624,
                chunk: int = 6656):
  """(a loop of chunk steps over a ring, the ring's shape) in one layout:
  `[2, rows, width]` split along its columns, or (blocked) `[2, rows,
  devices, width / devices]` split along its devices' axis."""
  mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
  spec = jax.sharding.PartitionSpec
  D = mesh.size
  shape = (2, rows, D, width // D) if blocked else (2, rows, width)
  split = spec(None, None, "batch", None) if blocked else spec(None, None,
                                                               "batch")
  targets = np.arange(0, rows, rows // 102)[:102].astype(np.int32)
  zero = np.int32(0)

  def body(j, ring):
    first = (j * (chunk // D if blocked else chunk)).astype(np.int32)
    size = (1, rows, D, chunk // D) if blocked else (1, rows, chunk)
    start = (zero,) * (len(shape) - 1) + (first,)
    block = jax.lax.dynamic_slice(ring, start, size)[0][targets]
    new = jax.lax.with_sharding_constraint(
        block.sum(0) * 0.5, jax.sharding.NamedSharding(
            mesh, spec("batch", None) if blocked else spec("batch")))
    at = (np.int32(1), np.int32(5)) + start[2:]
    return jax.lax.dynamic_update_slice(ring, new[None, None], at)

  ring = jax.ShapeDtypeStruct(shape, np.float64,
                              sharding=jax.sharding.NamedSharding(mesh, split))
  return jax.jit(lambda r, n: jax.lax.fori_loop(0, n, body, r)).lower(
      ring, jax.ShapeDtypeStruct((), np.int32)).compile().as_text(), shape


def compare_layouts() -> None:
  for blocked in (False, True):
    hlo, shape = chunk_steps(blocked)
    ops = [op for ops in collectives(hlo).values() for op in ops]
    name = "[devices, columns per device]" if blocked else "columns split"
    print(f"{name:<31} ring {shape}: {len(ops)} collectives"
          + "".join(f"; {op} {shape_}" for op, shape_, _ in ops))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  if _LAYOUTS.value:
    compare_layouts()
    return
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
        f"step, {largest * steps / 1e9:.1f} GB a sweep between devices "
        "(an upper bound)")


if __name__ == "__main__":
  command_line.run(main)
