"""Compiling the solver for a GPU that is not there (deviceless AOT).

XLA compiles a program for a GPU described by a target config (its SMs,
memory, caches: a `GpuTargetConfig` text proto) on a machine without one,
with JAX's CUDA plugin installed and JAX on the CPU. That gives the GPU
compile time, the GPU program (its fusions, its kernels) and XLA's cost
analysis of it; not run times, and not autotuning (GEMM tiles take their
defaults). The descriptions live in `farkle_jax/data/targets/`, each with
its sources.

Inside `aiming(name)`, `placement.make_mesh()` answers the target's
one-device mesh, so a method built there is a method for that GPU, and
`sweep_counts.bytes_accessed` compiles loop bodies for it.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from typing import Iterator

import jax
import numpy as np
from jax.sharding import Mesh

from farkle_jax.solver import placement

TARGETS = {"h100": "h100.txtpb"}   # name -> file in farkle_jax/data/targets
PLUGIN = "jax_plugins.xla_cuda13"  # the CUDA plugin module JAX loads
# The names the solver's Pallas kernels take (`wave_kernel`,
# `seat_wave_kernel`): `kernel_registers` reports these.
KERNELS = ("wave_chunk_row", "wave_held_row", "wave_move_columns",
           "seat_wave_chunk_row")
_USED = re.compile(r"Compiling entry function '(\w+)'.*?Used (\d+) "
                   r"registers", re.S)


class TargetError(ValueError):
  """A target that cannot be compiled for here; one line, said before any
  work."""


def _plugin_missing() -> bool:
  try:
    return importlib.util.find_spec(PLUGIN) is None
  except ModuleNotFoundError:
    return True


def check(name: str) -> None:
  """Raises TargetError naming what is wrong with compiling for `name`."""
  if name not in TARGETS:
    raise TargetError(f"--target: {name!r} is not a known target; known: "
                      f"{', '.join(sorted(TARGETS))}")
  if _plugin_missing():
    raise TargetError(
        f"--target={name}: JAX's CUDA plugin is not installed (pip install "
        f"\"jax[cuda13]=={jax.__version__}\", about 2.5 GB; no GPU needed)")
  if os.environ.get("JAX_PLATFORMS", "") != "cpu":
    raise TargetError(f"--target={name}: run with JAX_PLATFORMS=cpu (the "
                      "compile is deviceless; with the plugin loaded JAX "
                      "would look for a GPU)")


def description(name: str) -> str:
  """The target's GpuTargetConfig text proto."""
  path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                      "targets", TARGETS[name])
  with open(path) as f:
    return f.read()


def mesh(name: str) -> Mesh:
  """A one-device mesh of the target (axis "batch", as `make_mesh`)."""
  from jax.experimental import topologies   # only where the plugin is
  topology = topologies.get_topology_desc(
      platform="cuda", target_config=description(name), topology="1x1x1")
  devices = np.array(topology.devices).reshape(1)
  return Mesh(devices, ("batch",))


@contextlib.contextmanager
def aiming(name: str) -> Iterator[Mesh]:
  """Within: methods are built and their bodies compiled for `name`."""
  check(name)
  target = mesh(name)
  with placement.meshed(target):
    yield target


def fusions(hlo_text: str) -> int:
  """Kernels XLA launches for a compiled module: its fusion instructions
  and its custom calls (a Triton kernel is one), outside fused bodies."""
  count, fused = 0, False
  for line in hlo_text.splitlines():
    if line.startswith("%fused") or line.startswith("fused"):
      fused = True
    elif line.startswith(("%", "ENTRY")) and "{" in line:
      fused = False
    elif not fused and " = " in line and (
        " fusion(" in line or " custom-call(" in line):
      count += 1
  return count


def _ptxas() -> str | None:
  """The PTX assembler the CUDA plugin's packages bring, or one on PATH."""
  spec = importlib.util.find_spec("nvidia")
  for root in (spec.submodule_search_locations or []) if spec else []:
    found = sorted(glob.glob(os.path.join(root, "*", "bin", "ptxas")))
    if found:
      return found[0]
  return shutil.which("ptxas")


def kernel_registers(lowered: jax.stages.Lowered) -> dict[str, int]:
  """Registers a thread of each of the solver's Pallas kernels (KERNELS)
  in `lowered` compiled for the target: compiled again with its PTX
  written to a scratch folder, and ptxas's report on it (on an H200 these
  were what Nsight Compute read of the running kernels: 52 and 40 for
  two of them). {} where there is no ptxas or no such kernel; the
  occupancy a count allows is 65,536 / (registers x threads a block)
  blocks a multiprocessor on these cards."""
  ptxas = _ptxas()
  if ptxas is None:
    return {}
  found: dict[str, int] = {}
  with tempfile.TemporaryDirectory() as folder:
    lowered.compile(compiler_options={"xla_dump_to": folder})
    for path in sorted(glob.glob(os.path.join(folder, "*.ptx"))):
      with open(path) as f:
        text = f.read()
      names = [n for n in KERNELS if f".entry {n}(" in text]
      arch = re.search(r"^\.target\s+(\w+)", text, re.M)
      if not names or not arch:
        continue
      report = subprocess.run(
          [ptxas, f"-arch={arch.group(1)}", "-v", path, "-o", os.devnull],
          capture_output=True, text=True, timeout=300, check=False)
      for name, used in _USED.findall(report.stderr):
        if name in names:
          found[name] = max(found.get(name, 0), int(used))
  return found
