"""Memory policy: what a run may allocate, estimated before it allocates.

Every tool that allocates in proportion to the model (the solve, exact
evaluation, simulation) asks here: the bytes available where its arrays will
live (host memory for NumPy arrays, the device's memory for device arrays),
and `check`, which refuses a run that would not fit with one line that names
a setting that would.
"""

from __future__ import annotations

import jax
import numpy as np

from farkle_jax.game.layout import StateLayout

RUNTIME_BYTES = 2**29  # XLA runtime, tables and host-side bookkeeping
BYTES = {"float64": 8, "float32": 4}


class MemoryRefused(MemoryError):
  """A run that would not fit, with a setting that would."""


def available_bytes(on_device: bool) -> tuple[int, str]:
  """Bytes available for arrays, and where the figure comes from.

  Args:
    on_device: for device arrays (the default device's memory limit on an
      accelerator; host memory on a CPU backend), else for NumPy arrays.
  """
  dev = jax.devices()[0]
  if on_device and dev.platform != "cpu":
    stats = dev.memory_stats() or {}
    if "bytes_limit" in stats:
      return int(stats["bytes_limit"]), f"{dev.device_kind} memory"
  with open("/proc/meminfo") as f:
    info = dict(line.split(":", 1) for line in f)
  return int(info["MemAvailable"].split()[0]) * 1024, "available host memory"


def check(need: int, what: str, have: tuple[int, str],
          hints: list[str] | None = None, share: float = 1.0) -> int:
  """Raises MemoryRefused unless `need` bytes fit in `share` of `have`.

  Args:
    need: estimated bytes.
    what: what needs them, for the message.
    have: (bytes, where) as from `available_bytes`.
    hints: settings that would fit, for the message.
    share: the part of `have` the run may take.

  Returns:
    `need`.
  """
  have_bytes, where = have
  if need <= share * have_bytes:
    return need
  raise MemoryRefused(
      f"{what} needs about {need / 2**30:.2f} GB but {where} is "
      f"{have_bytes / 2**30:.2f} GB; settings that would fit: "
      f"{', '.join(hints or []) or 'none; use a larger device'}")


def check_arrays(need: int, what: str, on_device: bool = False) -> int:
  """Refuses arrays of an analysis that would take over 80% of the memory
  where they live (host or device); the hint is a smaller model."""
  return check(need, what, available_bytes(on_device),
               ["a higher rules.floor or a lower rules.goal (fewer states)"],
               share=0.8)


def full_state_bytes(layout: StateLayout, dtype: str = "float64",
                     width: int = 8, sets: int = 256) -> int:
  """Peak bytes of a value-iteration sweep: the value array plus the start
  values, index tables and one turn step's temporaries."""
  size = BYTES[dtype]
  values = int(np.prod(layout.value_shape)) * size
  keys = (layout.num_keys * size * 4
          + layout.num_chunks * layout.chunk_keys * 16)
  step = 3 * sets * width * layout.chunk_keys * size
  return values + keys + step


def solve_hints(layout: StateLayout, method: str, dtype: str, need: int,
                have: int) -> list[str]:
  """Settings that would bring a solve of `need` bytes within `have`."""
  hints = []
  if method != "ordered":
    hints.append("solver.method='ordered' (start-of-turn values only)")
  rules = layout.rules
  if rules.has_penalty:
    floor = rules.floor
    while floor < 0:
      floor = min(0, floor + 500)
      trial = StateLayout(rules.replace(floor=floor), layout.chunk_keys)
      scaled = (full_state_bytes(trial, dtype) * need
                // max(1, full_state_bytes(layout, dtype)))
      if scaled <= have:
        hints.append(f"rules.floor={floor}")
        break
  if dtype == "float64":
    hints.append("solver.dtype='float32' (halves the values, ~1e-7 accuracy)")
  return hints


def check_solve(layout: StateLayout, method: str, dtype: str,
                limit_gb: float | None, compiled_bytes: int | None = None
                ) -> int:
  """The solve's footprint; MemoryRefused (with hints) if it cannot fit.

  The estimate is XLA's memory analysis of the compiled chunk when given,
  else `full_state_bytes`; plus the runtime. The limit is `limit_gb` when
  set, else the default device's memory.
  """
  need = (full_state_bytes(layout, dtype) if compiled_bytes is None
          else compiled_bytes) + RUNTIME_BYTES
  if limit_gb is not None:
    have = (int(limit_gb * 2**30), "memory_limit_gb")
  else:
    have = available_bytes(on_device=True)
  hints = []
  if need > have[0]:
    hints = solve_hints(layout, method, dtype, need, have[0])
  return check(need, "this run", have, hints)
