"""The files of a finished run in its workdir, written and read back.

  workdir/summary.json       first-player win probability, iterations, final
                             residual, wall time, device, full config
  workdir/start_values.npy   converged W0[b, d, f, e] (or .npz, compressed,
                             in the solved values shipped with the package)
  workdir/tables/*.txt|json  turn tables of the configured slices
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import zipfile
from typing import Any, NamedTuple

import numpy as np
from absl import logging

from farkle_jax.game import roll_cache, roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import integrity, memory, queries


class Run(NamedTuple):
  """A finished run, loaded."""
  w0: np.ndarray               # [B, D, F, E] start-of-turn values
  layout: StateLayout
  roll: roll_tables.RollTables
  summary: dict[str, Any]


def table_name(workdir: str, b: int, d: int, f: int, e: int) -> str:
  """Path (without extension) of the turn table of slice (b, d, f, e)."""
  return os.path.join(workdir, "tables", f"turn_b{b}_d{d}_f{f}_e{e}")


class ResultsError(RuntimeError):
  """A workdir whose results cannot be used (missing, damaged, unfinished,
  or not converged)."""


def _replace_atomically(path: str, write) -> None:
  """Writes `path` whole or not at all: a temporary file beside it, moved
  over it once complete, and removed on any failure (a full disk,
  Ctrl-C)."""
  tmp = f"{path}.tmp{os.getpid()}"
  try:
    with open(tmp, "wb") as f:
      write(f)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    with contextlib.suppress(OSError):
      os.remove(tmp)
    raise


def convergence(summary: dict[str, Any]) -> dict[str, Any]:
  """Whether a run's values converged, its last max change and tolerance
  (a summary written before the flag counts as converged)."""
  return {"converged": bool(summary.get("converged", True)),
          "max_change": summary.get("final_residual"),
          "tol": summary.get("tol")}


def log_unconverged(workdir: str, summary: dict[str, Any]) -> None:
  """Says, as a reader opens it, that a run's values did not converge."""
  c = convergence(summary)
  logging.warning("%s holds the values of a run that did not converge (max "
                  "change %.3e >= tol %g): every figure read from it is "
                  "marked so", workdir, c["max_change"] or float("nan"),
                  c["tol"] or float("nan"))


def remove_stale_temporaries(workdir: str) -> None:
  """Removes what a killed writer left of `_replace_atomically` (call it
  holding the workdir's lock: no other writer is at work)."""
  for name in os.listdir(workdir) if os.path.isdir(workdir) else ():
    if re.fullmatch(r".+\.tmp\d+", name):
      with contextlib.suppress(OSError):
        os.remove(os.path.join(workdir, name))


def write_sealed(workdir: str, summary: dict[str, Any], w0: np.ndarray
                 ) -> None:
  """Writes the start values and, last, the sealed summary with their
  checksum (so a summary exists only beside its own start values)."""
  path = os.path.join(workdir, "summary.json")
  if os.path.exists(path):
    os.remove(path)
  _replace_atomically(os.path.join(workdir, "start_values.npy"),
                      lambda f: np.save(f, w0))
  sealed = integrity.seal({**summary, "checksums": {
      "start_values": integrity.array_checksum(w0)}})
  _replace_atomically(path, lambda f: f.write(
      json.dumps(sealed, indent=1).encode()))


def write(workdir: str, summary: dict[str, Any], w0: np.ndarray,
          layout: StateLayout, roll: roll_tables.RollTables,
          slices) -> None:
  """Writes the start values, the turn tables of `slices` and, last, the
  sealed summary (so a summary exists only beside its own start values)."""
  write_sealed(workdir, summary, w0)
  os.makedirs(os.path.join(workdir, "tables"), exist_ok=True)
  for b, d, f, e in slices:
    table = queries.turn_table(w0, layout, roll, b, d, f, e)
    name = table_name(workdir, b, d, f, e)
    with open(name + ".txt", "w") as fh:
      fh.write(queries.format_table(table) + "\n")
    with open(name + ".json", "w") as fh:
      fh.write(queries.to_json(table))


def compress(workdir: str, into: str) -> None:
  """Copies a finished run's summary and start values, compressed, into the
  directory `into` (which `load` reads like a workdir)."""
  load(workdir)   # only a verified, converged run is copied
  os.makedirs(into, exist_ok=True)
  w0 = np.load(os.path.join(workdir, "start_values.npy"), allow_pickle=False)
  _replace_atomically(os.path.join(into, "start_values.npz"),
                      lambda f: np.savez_compressed(f, start_values=w0))
  with open(os.path.join(workdir, "summary.json"), "rb") as f:
    summary = f.read()
  _replace_atomically(os.path.join(into, "summary.json"),
                      lambda f: f.write(summary))


def read_summary(workdir: str) -> dict[str, Any] | None:
  """The verified summary of the run in `workdir`, or None when there is
  none.

  Raises:
    ResultsError: summary.json is damaged.
  """
  path = os.path.join(workdir, "summary.json")
  if not os.path.exists(path):
    return None
  try:
    with open(path) as f:
      return integrity.unseal(json.load(f), "summary.json")
  except (ValueError, UnicodeDecodeError, integrity.Damaged) as e:
    raise ResultsError(f"{path} is damaged ({_first_line(e)}); rerun "
                       "farkle_jax.main with this --workdir to rewrite it "
                       "from the checkpoints") from None


def load(workdir: str, allow_unconverged: bool = False) -> Run:
  """Loads and verifies a finished run.

  Args:
    workdir: the run's workdir.
    allow_unconverged: load a run that stopped above its tolerance.

  Raises:
    ResultsError: no finished run, damaged files, or not converged.
  """
  summary = read_summary(workdir)
  if summary is None:
    raise ResultsError(_missing(workdir))
  if summary.get("players", 2) > 2:
    raise ResultsError(
        f"the run in {workdir} is a game of {summary['players']} players: "
        "ask it with table or advise and --scores, or analyze seats")
  if not summary["converged"] and allow_unconverged:
    log_unconverged(workdir, summary)
  if not summary["converged"] and not allow_unconverged:
    raise ResultsError(
        f"the run in {workdir} did not converge (max change "
        f"{summary['final_residual']:.3e} >= tol {summary['tol']:g} after "
        f"{summary['iterations']} sweeps); solve on with a higher "
        "--config.solver.max_iterations, or pass --allow_unconverged")
  rules = rules_lib.from_mapping(summary["rules"])
  layout = StateLayout(rules)
  memory.check_arrays(layout.num_keys * 8, "the start values")
  path = os.path.join(workdir, "start_values.npy")
  if not os.path.exists(path) and os.path.exists(path[:-1] + "z"):
    path = path[:-1] + "z"   # shipped values, compressed (`compress`)
  try:
    w0 = np.load(path, allow_pickle=False)
    if isinstance(w0, np.lib.npyio.NpzFile):
      with w0:
        w0 = w0["start_values"]
    if w0.shape != layout.key_shape:
      raise integrity.Damaged(f"shape {w0.shape}, expected {layout.key_shape}")
    integrity.verify_arrays({"start_values": w0}, summary["checksums"], path)
    integrity.check_probabilities(w0, path)
  except (OSError, ValueError, EOFError, KeyError,
          zipfile.BadZipFile) as e:  # Damaged is a ValueError
    raise ResultsError(f"{path} is missing or damaged ({_first_line(e)}); "
                       "rerun farkle_jax.main with this --workdir to rewrite "
                       "it from the checkpoints") from None
  return Run(w0, layout, roll_cache.tables(rules), summary)


def _missing(workdir: str) -> str:
  if not os.path.isdir(workdir):
    return f"{workdir} does not exist: solve first with farkle_jax.main"
  if os.path.isdir(os.path.join(workdir, "checkpoints")):
    return (f"{workdir} holds an unfinished solve (checkpoints, no "
            "summary.json); rerun farkle_jax.main with this --workdir to "
            "finish it")
  return (f"{workdir} holds no finished run (no summary.json); run "
          "farkle_jax.main with this --workdir first")


def _first_line(e: Exception) -> str:
  return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
