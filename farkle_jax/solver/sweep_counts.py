"""What one sweep moves and waits on, counted on any machine
(docs/model.md §4.4).

A GPU runs a sweep as fast as its memory delivers the bytes the sweep
reads and its loop control walks the dependent steps. Both are counts the
program knows without a GPU:

* dependent loop steps per sweep (each iteration of a `while` loop is a
  round trip of loop control from the host),
* bytes gathered per sweep, counted by the method from its own plan (the
  tables and schedule it runs),
* bytes written per sweep, likewise,
* bytes accessed per sweep by XLA's cost analysis of the compiled loop
  bodies, each counted at its trip count (XLA counts a loop body once).
  XLA charges every fusion the whole of each array it reads from, so a
  fusion that gathers one row of a ring is charged the ring: an upper
  bound, far above the traffic when one step runs as many fusions.

The projection of a solve on an H100 from them is

    seconds = sweeps x ((gathered + written) / HBM bandwidth
                        + dependent steps x loop-step latency)

with the H100 SXM's HBM3 bandwidth, 3.35 TB/s (NVIDIA's datasheet), and
8 us per dependent loop step (the per-iteration cost of `lax.scan` /
`while_loop` on a GPU measured in QuantEcon lecture-python-programming
#437/#440 and jax-ml/jax #2491). It is a projection, not a measurement:
it assumes the bytes stream at full bandwidth and arithmetic hides behind
them.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from farkle_jax.solver import placement

H100_HBM_BYTES_PER_S = 3.35e12
LOOP_STEP_S = 8e-6


class SweepCounts(NamedTuple):
  """Counts of one sweep of a method (one policy step per stage)."""
  dependent_steps: int       # loop iterations on the critical path
  gathered_bytes: int        # read by gathers, from the method's plan
  xla_bytes_accessed: float  # XLA's cost analysis, loops at trip count
  written_bytes: int = 0     # written, from the method's plan
  column_steps: int = 0      # rows evaluated, idle ones included
  live_rows: int = 0         # key-rows of the model (states / 6)
  kernel_bytes: int = 0      # of xla_bytes_accessed, the Pallas kernels'
                             #   (custom calls XLA does not count), from
                             #   their plans
  kernel_rows: int = 0       # of column_steps, those a fused kernel
                             #   computes (it skips idle tiles); 0: none


def projected_seconds(counts: SweepCounts, sweeps: int,
                      bandwidth: float = H100_HBM_BYTES_PER_S,
                      step_s: float = LOOP_STEP_S, xla: bool = False
                      ) -> float:
  """Projected solve time after compilation (module docstring); with
  `xla`, from XLA's bytes accessed instead of the plan's bytes."""
  moved = (counts.xla_bytes_accessed if xla
           else counts.gathered_bytes + counts.written_bytes)
  return sweeps * (moved / bandwidth + counts.dependent_steps * step_s)


def bytes_accessed(fn: Callable, *args: Any, donate: int | None = None
                   ) -> float:
  """XLA's bytes accessed by `jax.jit(fn)(*args)` as compiled: for this
  machine's backend, or for the GPU being aimed at (`compile_target`),
  where the compiled module's cost is read by XLA's HLO cost analysis (its
  `cost_analysis()` is not there without the device). `donate`: the
  argument a loop carries (updated in place there, not copied)."""
  target = placement.aimed()
  jitted = jax.jit(fn, donate_argnums=() if donate is None else donate)
  if target is None:
    compiled = jitted.lower(*args).compile()
    return float(compiled.cost_analysis()["bytes accessed"])
  copies = placement.everywhere(target)
  specs = jax.tree.map(lambda x: jax.ShapeDtypeStruct(
      jnp.shape(x), x.dtype if hasattr(x, "dtype") else jnp.result_type(x),
      sharding=copies), args)
  compiled = jitted.lower(*specs).compile()
  return float(module_cost(compiled)["bytes accessed"])


def module_cost(compiled: Any) -> dict[str, float]:
  """XLA's HLO cost analysis of a compiled program's module (loop bodies
  counted once), run by the CPU client over any backend's module."""
  from jax._src.lib import _jax   # the analysis XLA exposes to JAX
  module = compiled._executable.xla_extension_executable().hlo_modules()[0]
  client = jax.devices("cpu")[0].client
  return _jax.hlo_module_cost_analysis(client, module)
