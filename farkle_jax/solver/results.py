"""The files of a finished run in its workdir, written and read back.

  workdir/summary.json       first-player win probability, iterations, final
                             residual, wall time, device, full config
  workdir/start_values.npy   converged W0[b, d, f, e]
  workdir/tables/*.txt|json  turn tables of the configured slices
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import queries


class Run(NamedTuple):
  """A finished run, loaded."""
  w0: np.ndarray               # [B, D, F, E] start-of-turn values
  layout: StateLayout
  roll: roll_tables.RollTables
  summary: dict[str, Any]


def table_name(workdir: str, b: int, d: int, f: int, e: int) -> str:
  """Path (without extension) of the turn table of slice (b, d, f, e)."""
  return os.path.join(workdir, "tables", f"turn_b{b}_d{d}_f{f}_e{e}")


def write(workdir: str, summary: dict[str, Any], w0: np.ndarray,
          layout: StateLayout, roll: roll_tables.RollTables,
          slices) -> None:
  """Writes the start values, the summary and the turn tables of `slices`."""
  np.save(os.path.join(workdir, "start_values.npy"), w0)
  with open(os.path.join(workdir, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1, default=str)
  os.makedirs(os.path.join(workdir, "tables"), exist_ok=True)
  for b, d, f, e in slices:
    table = queries.turn_table(w0, layout, roll, b, d, f, e)
    name = table_name(workdir, b, d, f, e)
    with open(name + ".txt", "w") as fh:
      fh.write(queries.format_table(table) + "\n")
    with open(name + ".json", "w") as fh:
      fh.write(queries.to_json(table))


def read_summary(workdir: str) -> dict[str, Any] | None:
  """The summary of the run in `workdir`, or None when there is none."""
  path = os.path.join(workdir, "summary.json")
  if not os.path.exists(path):
    return None
  with open(path) as f:
    return json.load(f)


def load(workdir: str) -> Run:
  """Loads a finished run."""
  summary = read_summary(workdir)
  if summary is None:
    raise FileNotFoundError(f"{workdir} holds no finished run (no summary.json)"
                            "; run farkle_jax.main with this --workdir first")
  rules = rules_lib.from_mapping(summary["rules"])
  w0 = np.load(os.path.join(workdir, "start_values.npy"))
  return Run(w0, StateLayout(rules), roll_tables.build(rules), summary)
