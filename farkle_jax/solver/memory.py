"""Memory policy: what a run may allocate, estimated before it allocates.

Every tool that allocates in proportion to the model (the solve, exact
evaluation, simulation) asks here: the bytes available where its arrays will
live (host memory for NumPy arrays, the device's memory for device arrays),
and `check`, which refuses a run that would not fit with one line that names
a setting that would.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import wave_schedule

# JAX and the solver's modules (which import it) are imported where they
# are needed: a query of a solved run checks host memory here without
# paying for JAX's import.

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
  if on_device:
    import jax
    dev = jax.devices()[0]
  if on_device and dev.platform != "cpu":
    stats = dev.memory_stats() or {}
    if "bytes_limit" in stats:
      return int(stats["bytes_limit"]), f"{dev.device_kind} memory"
  with open("/proc/meminfo") as f:
    info = dict(line.split(":", 1) for line in f)
  return int(info["MemAvailable"].split()[0]) * 1024, "available host memory"


def shared_need(per_device: int, devices: int | None = None) -> int:
  """The bytes a check weighs for `per_device` bytes on each of `devices`
  devices (default: all visible): on a CPU backend the devices share the
  host's memory, so all of theirs; on an accelerator, one device's (each
  checked against its own memory)."""
  import jax
  if jax.devices()[0].platform != "cpu":
    return per_device
  return per_device * (jax.device_count() if devices is None else devices)


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


# Host bytes per key of building a method's index tables (NumPy int64
# temporaries), measured with some margin on facebook at L = -2500 and
# -10,000 (380 and 335 bytes per key for ordered).
HOST_BYTES_PER_KEY = {"ordered": 448, "value_iteration": 256,
                      "wavefront": 512}
TEMP_BYTES = 2**23  # per-stage temporaries of the ordered turn pass


class Footprint(NamedTuple):
  """Estimated peak bytes of a run, by where they live."""
  host: int     # NumPy tables while building, with the runtime
  device: int   # device arrays: state, tables, temporaries


def analysis_bytes(layout: StateLayout) -> int:
  """Host bytes of the per-key arrays of a strategy analysis: key fields
  and classes, and a bank distribution over the turn rows for every key
  (exact evaluation), the largest of them."""
  return layout.num_keys * (96 + 8 * (layout.num_rows + 1))


def full_state_bytes(layout: StateLayout, dtype: str = "float64",
                     width: int = 8, sets: int = 256, devices: int = 1) -> int:
  """Peak bytes on each device of a value-iteration sweep: its share of the
  value array twice (XLA keeps the previous one while writing), the start
  values, the index tables and one turn step's temporaries."""
  size = BYTES[dtype]
  from farkle_jax.solver import value_iteration
  chunks = value_iteration.padded_chunks(layout, devices) // devices
  values = chunks * int(np.prod(layout.value_shape[1:])) * size
  keys = (layout.num_keys * size * 4
          + layout.num_chunks * layout.chunk_keys * 16)
  step = 3 * sets * width * layout.chunk_keys * size
  return 2 * values + keys + step


def ordered_bytes(layout: StateLayout, dtype: str = "float64",
                  newton_step: bool = True) -> int:
  """Peak device bytes of an ordered sweep: a few copies of the padded
  start vector, the stage tables (int32, padded) and the temporaries; with
  a penalty also the Newton correction's turn exits, and each sub-batch's
  option picks and forward pass (its keys: the default sub-batch of
  `ordered.default_b_group`)."""
  size = BYTES[dtype]
  base = (4 * layout.padded_size * size + 48 * layout.num_keys
          + TEMP_BYTES * size // 8)
  if not (newton_step and layout.rules.has_penalty):
    return base
  from farkle_jax.solver import newton, ordered
  group = (min(ordered.default_b_group(layout), layout.num_scores)
           * layout.bank_min * layout.num_farkle)
  rows = layout.num_rows + 1
  picks = rows * group * (OPTIONS_PER_ROW + 2 * layout.dice_states * size)
  return base + newton.buffer_bytes(layout) + 32 * layout.num_keys + picks


# The wavefront's per-column arrays: a ring of the last rows a roll can
# reach (at most RING_ROWS, 81 for facebook) for values and float32 slopes,
# two of them (each segment writes one from the other), and the
# temporaries of a step (a chunk's, bounded by the whole width's):
# the distinct targets it reads (102 per row for facebook) and the score
# sets' best options (228). The compiled footprint of configs/default.py is
# 0.31 GB against an estimate of 0.42 GB.
RING_ROWS = 128
TARGETS_PER_ROW = 128
OPTIONS_PER_ROW = 1024


def wavefront_bytes(layout: StateLayout, dtype: str = "float64",
                    devices: int = 1) -> int:
  """Peak bytes on each device of a wavefront sweep: the padded start
  vector, the per-key and per-step tables, and its share of the columns'
  two rings and temporaries."""
  size = BYTES[dtype]
  columns = -(-wave_schedule.ring_columns(layout, 128 * devices) // devices)
  rows = min(RING_ROWS, layout.num_rows + 1)
  per_column = (2 * rows * 6 * (size + 4) + TARGETS_PER_ROW * (size + 4)
                + 256 * (size + 4) + 64)
  groups = layout.num_scores * layout.num_farkle ** 2 * 12 * (
      2 * layout.num_scores + layout.num_scores // layout.bank_min + 2)
  return (4 * layout.padded_size * size + 24 * layout.num_keys + groups
          + 2 * 4 * layout.num_keys + columns * per_column)


def wavefront_newton_bytes(layout: StateLayout, dtype: str = "float64",
                           devices: int = 1) -> int:
  """The wavefront's bytes and its Newton step's: the exit buffer, the
  sweep's input kept for the correction, the exits' stage tables, and a
  sub-batch's picks and forward pass (as the ordered method's)."""
  return (wavefront_bytes(layout, dtype, devices)
          + ordered_bytes(layout, dtype)
          - 2 * layout.padded_size * BYTES[dtype])


def footprint(layout: StateLayout, method: str, dtype: str,
              devices: int = 1) -> Footprint:
  """A run's footprint from the sizes alone, before anything is built
  (`ordered-newton`, `wavefront-newton`: the method with its Newton
  step); `device` is
  per device of a mesh of `devices` (the ordered method keeps its whole
  state on every device, the others split theirs)."""
  device = {
      "ordered": lambda: ordered_bytes(layout, dtype, False),
      "ordered-newton": lambda: ordered_bytes(layout, dtype),
      "wavefront": lambda: wavefront_bytes(layout, dtype, devices),
      "wavefront-newton": lambda: wavefront_newton_bytes(layout, dtype,
                                                         devices),
      "value_iteration": lambda: full_state_bytes(layout, dtype,
                                                  devices=devices),
  }[method]()
  host = HOST_BYTES_PER_KEY[method.split("-")[0]]
  return Footprint(RUNTIME_BYTES + host * layout.num_keys, device)


def _fits(fp: Footprint, limits: tuple[int, int], shared: bool,
          devices: int = 1) -> bool:
  if shared:  # a CPU backend: its devices share the host's memory
    return fp.host + devices * fp.device <= limits[0]
  return fp.host <= limits[0] and fp.device <= limits[1]


def devices_that_fit(layout: StateLayout, method: str, dtype: str,
                     per_device: int, most: int = 4096) -> int | None:
  """The fewest devices of `per_device` bytes each over which `method`
  fits, or None (the ordered method keeps its state whole on each)."""
  if footprint(layout, method, dtype, most).device > per_device:
    return None
  low, high = 1, most  # footprint falls as devices grow
  while low < high:
    mid = (low + high) // 2
    if footprint(layout, method, dtype, mid).device <= per_device:
      high = mid
    else:
      low = mid + 1
  return low


def solve_hints(layout: StateLayout, method: str, dtype: str,
                fits) -> list[str]:
  """Settings that would bring a solve within memory, each checked with
  `fits(layout, method, dtype)`. Where no smaller game fits `method` but
  one fits the ordered method (the wavefront's rings alone can outgrow a
  device: auto is the wavefront on an accelerator), that game with it."""
  hints = []
  # The ordered method as the run would take it (a Newton step kept).
  ordered = "ordered-newton" if method.endswith("-newton") else "ordered"
  switch = not method.startswith("ordered")
  if switch and fits(layout, ordered, dtype):
    hints.append("solver.method='ordered' (start-of-turn values only)")
    switch = False
  elif method.endswith("-newton") and fits(
      layout, method.split("-")[0], dtype):
    hints.append("solver.newton=False")
  if dtype == "float64" and fits(layout, method, "float32"):
    hints.append("solver.dtype='float32' with solver.tol >= 1e-6 (about "
                 "1e-7 accuracy)")
  smaller = smaller_games(layout, method, dtype, fits)
  if not smaller and switch:
    smaller = [f"solver.method='ordered' with {hint}" for hint in
               smaller_games(layout, ordered, dtype, fits)]
  return hints + smaller


def smaller_games(layout: StateLayout, method: str, dtype: str,
                  fits) -> list[str]:
  """The deepest round floor and the highest round goal (each alone, the
  other rules kept) at which `method` fits."""
  hints = []
  rules = layout.rules
  if rules.has_penalty:   # the lowest round floor that fits, by bisection
    unit = math.lcm(500, rules.step)
    depth = largest_fitting(0, -(rules.floor // unit) - 1, lambda k: fits(
        StateLayout(rules.replace(floor=-k * unit), layout.chunk_keys),
        method, dtype))
    if depth is not None:
      hints.append(f"rules.floor={-depth * unit}")
  for goal in (100_000, 50_000, 20_000, 10_000, 5_000, 3_000, 2_000, 1_000):
    if (rules.bank_minimum <= goal < rules.goal and goal % rules.step == 0
        and fits(StateLayout(rules.replace(goal=goal), layout.chunk_keys),
                 method, dtype)):
      hints.append(f"rules.goal={goal}")
      break
  return hints


def largest_fitting(lo: int, hi: int, fits) -> int | None:
  """The largest x in lo..hi with fits(x), where fits holds up to some x
  and fails above it: by bisection, a few dozen estimates however large
  the range, or None."""
  if hi < lo or not fits(lo):
    return None
  while lo < hi:
    mid = (lo + hi + 1) // 2
    lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
  return lo


def check_solve(layout: StateLayout, method: str, dtype: str,
                limit_gb: float | None, compiled_bytes: int | None = None,
                devices: int | None = None, shared: bool | None = None
                ) -> int:
  """The solve's footprint; MemoryRefused (with hints) if it cannot fit.

  Called twice: before anything is built, from the sizes alone
  (`footprint`), and after compiling with XLA's memory analysis of the
  chunk (`compiled_bytes`, per device) in place of the device estimate.
  The limit is `limit_gb` when set (host, and each device), else the memory
  there. `devices` (default: all visible) is the mesh the run splits over;
  `shared` (default: on a CPU backend) that they share the host's memory.
  On an accelerator a refusal names how many devices of the kind would fit.
  """
  import jax
  devices = jax.device_count() if devices is None else devices
  if shared is None:
    shared = jax.devices()[0].platform == "cpu"
  if limit_gb is not None:
    limits = (int(limit_gb * 2**30),) * 2
    where = "memory_limit_gb"
  else:
    limits = (available_bytes(False)[0], available_bytes(True)[0])
    where = "available host memory" if shared else "available memory"

  def estimate(lay, meth, dt):
    fp = footprint(lay, meth, dt, devices)
    if compiled_bytes is not None and (lay, meth, dt) == (layout, method,
                                                          dtype):
      fp = fp._replace(device=compiled_bytes)
    return fp

  fp = estimate(layout, method, dtype)
  if _fits(fp, limits, shared, devices):
    return fp.host + devices * fp.device
  hints = solve_hints(layout, method, dtype,
                      lambda *a: _fits(estimate(*a), limits, shared, devices))
  if shared:
    need, have = fp.host + devices * fp.device, limits[0]
  elif fp.host > limits[0]:
    need, have = fp.host, limits[0]
  else:
    need, have = fp.device, limits[1]
    more = devices_that_fit(layout, method, dtype, limits[1])
    if more is not None and more > devices:
      hints.insert(0, f"{more} devices of {limits[1] / 2**30:.1f} GB "
                   f"(this run has {devices})")
  return check(need, "this run", (have, where), hints)
