"""Seconds per ordered sweep with and without the Newton step, in one process.

    python experiments/sweep_cost.py --config configs/default.py
    python experiments/sweep_cost.py --config configs/default.py \
        --config.rules.goal=6000 --config.rules.floor=-1500 --sweeps=3

Each variant is compiled, runs one sweep from the initial values (with
compilation, not timed), then `--sweeps` more, each timed on its own; the
line shows their mean and range. Without a penalty both variants are the
same method.
"""

from __future__ import annotations

import time

import jax
import numpy as np
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import configuration, methods


def time_sweeps(layout, roll, settings, sweeps: int) -> list[float]:
  """Seconds of each of `sweeps` sweeps after a first, untimed one."""
  method = methods.build(layout, roll, settings)
  sweep = jax.jit(method.sweep, donate_argnums=0)
  state = sweep(method.init(), method.tables)[0]
  jax.block_until_ready(state)
  seconds = []
  for _ in range(sweeps):
    t0 = time.perf_counter()
    state = sweep(state, method.tables)[0]
    jax.block_until_ready(state)
    seconds.append(time.perf_counter() - t0)
  return seconds


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  rules, settings = configuration.check(_CONFIG.value)
  layout = StateLayout(rules, settings.chunk_keys)
  roll = roll_tables.build(rules)
  print(f"# goal={rules.goal} floor={rules.floor}  {layout.num_states:,} "
        f"model states  {jax.default_backend()} x{jax.device_count()}")
  for name, newton in (("ordered-plain", False), ("ordered", True)):
    s = time_sweeps(layout, roll, settings._replace(method="ordered",
                                                    newton=newton),
                    _SWEEPS.value)
    print(f"{name:<14} {np.mean(s):8.2f} s per sweep "
          f"({min(s):.2f} - {max(s):.2f}, {len(s)} sweeps)")


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/default.py", "Config file, e.g. configs/default.py.",
      lock_config=True)
  _SWEEPS = flags.DEFINE_integer("sweeps", 3, "Timed sweeps per variant.",
                                 lower_bound=1)
  command_line.run(main)
