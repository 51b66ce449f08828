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

from typing import NamedTuple

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


def projected_seconds(counts: SweepCounts, sweeps: int,
                      bandwidth: float = H100_HBM_BYTES_PER_S,
                      step_s: float = LOOP_STEP_S, xla: bool = False
                      ) -> float:
  """Projected solve time after compilation (module docstring); with
  `xla`, from XLA's bytes accessed instead of the plan's bytes."""
  moved = (counts.xla_bytes_accessed if xla
           else counts.gathered_bytes + counts.written_bytes)
  return sweeps * (moved / bandwidth + counts.dependent_steps * step_s)
