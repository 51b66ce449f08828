"""How many sweeps a better start could save: a method restarted from its
own solution, every start value moved by a relative error, counts its
sweeps back to the tolerance.

  python experiments/start_accuracy.py --config configs/default.py \
      --method=wavefront --errors=1e-1,1e-2,1e-4,1e-6

Solves the config from its initial values first (the sweeps a run takes),
then, for each relative error e and each kind, restarts the method from the
solution with each start value v set to v (1 + e u), u uniform in [-1, 1]
("noise"), or to v (1 + e) ("scale"), clipped to [0, 1], as a resumed run
starts, and counts the sweeps to the config's tolerance again. Counts that
barely fall as e shrinks say the sweeps are set by how fast the method
contracts, not by where it starts. One line per run as it ends (with the
time left); `--json` keeps the table.
"""

from __future__ import annotations

import json
import time

import jax
import numpy as np
from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import configuration, methods

KINDS = ("noise", "scale")
VECTOR = "padded-w0-vector/v1"   # a state that is the start values alone


def _errors(text: list[str]) -> list[float]:
  """--errors as floats in (0, 1), or a one-line refusal."""
  try:
    errors = [float(e) for e in text]
  except ValueError:
    raise app.UsageError(f"--errors: {text} are not numbers (e.g. "
                         "--errors=1e-2,1e-4)") from None
  if not errors or not all(0 < e < 1 for e in errors):
    raise app.UsageError(f"--errors: {text}: each must lie in (0, 1)")
  return errors


def sweeps_from(method: methods.Method, sweep, state, tol: float,
                most: int) -> tuple[list[float], tuple]:
  """The changes of the sweeps from `state` until one is below `tol` (at
  most `most`), and the state they leave."""
  changes = []
  while len(changes) < most:
    state, change, _, _ = sweep(state, method.tables)
    changes.append(float(change))
    if changes[-1] < tol:
      break
  return changes, state


def moved(w0: np.ndarray, error: float, kind: str, rng) -> np.ndarray:
  """Start values [B, D, F, E] each off by a relative `error`."""
  if kind == "scale":
    return np.clip(w0 * (1 + error), 0, 1)
  return np.clip(w0 * (1 + error * rng.uniform(-1, 1, w0.shape)), 0, 1)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  errors = _errors(_ERRORS.value)
  cfg = _CONFIG.value.copy_and_resolve_references()
  if _METHOD.value:
    cfg.solver.method = _METHOD.value
  rules, settings = configuration.check(cfg)
  if rules.players != 2:
    raise app.UsageError(f"rules.players: {rules.players}: this experiment "
                         "restarts the two-player methods (2)")
  layout = StateLayout(rules, settings.chunk_keys)
  method = methods.build(layout, roll_tables.build(rules), settings)
  if method.state_format != VECTOR:
    raise app.UsageError(f"--method: {method.name!r} does not start from "
                         "its start values alone (ordered, wavefront)")
  sweep = jax.jit(method.sweep)
  t0 = time.time()
  first, state = sweeps_from(method, sweep, method.init(), settings.tol,
                             _MOST.value)
  solution = np.asarray(method.start_values(state))
  rows = [dict(error="initial values", kind="-", sweeps=len(first),
               changes=first)]
  print(f"# {rules.name}, {settings.method}, {settings.norm} tol "
        f"{settings.tol:g}: {len(first)} sweeps from the initial values "
        f"({time.time() - t0:.0f} s)", flush=True)
  rng = np.random.default_rng(_SEED.value)
  runs = [(e, k) for e in errors for k in KINDS]
  for i, (error, kind) in enumerate(runs, 1):
    vector = layout.padded_start(moved(solution, error, kind, rng))
    start = method.from_checkpoint({"vector": jax.numpy.asarray(vector)},
                                   None)
    changes, _ = sweeps_from(method, sweep, start, settings.tol, _MOST.value)
    rows.append(dict(error=error, kind=kind, sweeps=len(changes),
                     changes=changes))
    spent = time.time() - t0
    left = spent / (i + 1) * (len(runs) - i)
    print(f"{error:8.0e} {kind:6s} {len(changes):3d} sweeps  changes "
          + " ".join(f"{c:.1e}" for c in changes)
          + f"  ({i}/{len(runs)}, about {left:.0f} s left)", flush=True)
  if _JSON.value:
    with open(_JSON.value, "w") as f:
      json.dump(dict(config=rules.name, method=settings.method,
                     norm=settings.norm, tol=settings.tol, rows=rows), f,
                indent=1)


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
  _METHOD = flags.DEFINE_string("method", "", "Solve method (default: the "
                                "config's).")
  _ERRORS = flags.DEFINE_list("errors", ["1e-1", "1e-2", "1e-4", "1e-6"],
                              "Relative errors of the restarts.")
  _SEED = flags.DEFINE_integer("seed", 0, "Seed of the noise.")
  _MOST = flags.DEFINE_integer("most", 40, "Most sweeps of one run.")
  _JSON = flags.DEFINE_string("json", "", "Write the table here too.")
  command_line.run(main, required=("config",))
