"""Seconds per ordered sweep with and without the Newton step, in one process.

    python experiments/sweep_cost.py --config configs/default.py
    python experiments/sweep_cost.py --config configs/default.py \
        --config.rules.goal=6000 --config.rules.floor=-1500 --sweeps=3

Each variant is compiled, runs one sweep from the initial values (with
compilation, not timed), then `--sweeps` more, each timed on its own; the
line shows their mean and range. Without a penalty both variants are the
same method.

`--parts` adds a profile by parts of the Newton sweep: the same sweep with
the forward pass (`bellman.turn_exits`) replaced by zeros, then also the
exit store and the correction's passes. Those variants compute nothing
useful; only their time is read, and the differences are what each part
costs inside the compiled sweep.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman, configuration, methods, newton


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


def _no_exits(rows, chosen, padded, bank_base, top, roll, layout):
  """Zero exits that still read the picks, so they are kept."""
  keep = chosen[0, 0].astype(rows.dtype)
  return jnp.zeros((layout.num_rows + 1, rows.shape[-1]), rows.dtype) + keep, \
      keep


def _no_store(buffer, bank, s, tables, bank_min):
  return buffer.at[s].add(bank.sum().astype(buffer.dtype))


def _no_correction(new, old, buffer, farkle_exit, *args, **kwargs):
  keep = 0 * (buffer.sum() + farkle_exit.sum())
  return new + keep, jnp.zeros((), jnp.int32)


PARTS = (("  without the forward pass", {"turn_exits": _no_exits}),
         ("  without store, correction", {"turn_exits": _no_exits,
                                          "store": _no_store,
                                          "correct": _no_correction}))


def _time_without(parts: dict, *args) -> list[float]:
  """time_sweeps with parts of the Newton sweep replaced, then restored."""
  owners = {"turn_exits": bellman, "store": newton, "correct": newton}
  saved = {name: getattr(owners[name], name) for name in parts}
  try:
    for name, stand_in in parts.items():
      setattr(owners[name], name, stand_in)
    return time_sweeps(*args)
  finally:
    for name, real in saved.items():
      setattr(owners[name], name, real)


def _line(name: str, s: list[float]) -> str:
  return (f"{name:<28} {np.mean(s):8.2f} s per sweep "
          f"({min(s):.2f} - {max(s):.2f}, {len(s)} sweeps)")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  rules, settings = configuration.check(_CONFIG.value)
  layout = StateLayout(rules, settings.chunk_keys)
  roll = roll_tables.build(rules)
  print(f"# goal={rules.goal} floor={rules.floor}  {layout.num_states:,} "
        f"model states  {jax.default_backend()} x{jax.device_count()}")
  for name, step in (("ordered-plain", False), ("ordered-newton", True)):
    chosen = settings._replace(method="ordered", newton=step)
    print(_line(name, time_sweeps(layout, roll, chosen, _SWEEPS.value)))
  for name, parts in PARTS if _PARTS.value else ():
    print(_line(name, _time_without(parts, layout, roll, chosen,
                                    _SWEEPS.value)))


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/default.py", "Config file, e.g. configs/default.py.",
      lock_config=True)
  _SWEEPS = flags.DEFINE_integer("sweeps", 3, "Timed sweeps per variant.",
                                 lower_bound=1)
  _PARTS = flags.DEFINE_boolean("parts", False,
                                "Also time the Newton sweep without its "
                                "forward pass, then without its store and "
                                "correction.")
  command_line.run(main)
