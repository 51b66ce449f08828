"""The roll tables of a rule set kept on disk, so that a process that only
reads a solved game (a query, the advice for one roll) starts without the
combinatorics of `roll_tables.build` (0.1 s for `facebook` on a 2-core
CPU, most of a query's own time).

A file holds the tables of one rule set, under
`$XDG_CACHE_HOME/farkle_jax/roll_tables` (~/.cache/...). Its name is a
digest of the rules and of the code and data that build tables (the
modules of `SOURCES`, the dice catalog), so a change of either builds them
anew. A file that cannot be read, or a folder that cannot be written, is
passed over: the tables are then built as without a cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import zipfile

import numpy as np

from farkle_jax.game import dice, roll_tables, rules, scoring
from farkle_jax.game.rules import Rules

# The code and data the tables follow from.
SOURCES = (dice, roll_tables, rules, scoring)
_ARRAYS = ("set_dice", "set_prob", "opt_pts", "opt_next", "farkle_prob")


def default_dir() -> str:
  """Where the files live when nothing says otherwise."""
  home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(home, "farkle_jax", "roll_tables")


def tables(r: Rules, folder: str | None = None) -> roll_tables.RollTables:
  """`roll_tables.build(r)`, read from the cache in `folder` (default:
  `default_dir()`) when it holds them, else built and written there."""
  digest = _digest(r)
  if digest is None:   # the sources cannot be read: no cache
    return roll_tables.build(r)
  path = os.path.join(folder or default_dir(), f"{digest}.npz")
  try:
    with np.load(path, allow_pickle=False) as f:
      return _from_arrays(f)
  except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
    pass   # none yet, or damaged: built anew
  built = roll_tables.build(r)
  with contextlib.suppress(OSError):
    _write(path, built)
  return built


def _digest(r: Rules) -> str | None:
  """SHA-256 of the rules and of the sources that build their tables."""
  h = hashlib.sha256(json.dumps(r.to_dict(), sort_keys=True,
                                default=str).encode())
  try:
    for module in SOURCES:
      with open(module.__file__, "rb") as f:
        h.update(f.read())
    with open(dice.CATALOG, "rb") as f:
      h.update(f.read())
  except (OSError, AttributeError, TypeError):
    return None
  return h.hexdigest()


def _write(path: str, t: roll_tables.RollTables) -> None:
  """The tables as one .npz, written whole or not at all."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  pairs = [(n, pts, nxt) for n, opts in enumerate(t.reach_pts)
           for pts, nxt in opts]
  tmp = f"{path}.tmp{os.getpid()}"
  try:
    with open(tmp, "wb") as f:
      np.savez(f, **{a: getattr(t, a) for a in _ARRAYS},
               reach=np.array(pairs, np.int64).reshape(-1, 3))
    os.replace(tmp, path)
  finally:
    with contextlib.suppress(OSError):
      os.remove(tmp)


def _from_arrays(f) -> roll_tables.RollTables:
  """The tables from the arrays `_write` wrote."""
  arrays = {a: f[a] for a in _ARRAYS}
  by_state = [[] for _ in arrays["farkle_prob"]]
  for n, pts, nxt in f["reach"].tolist():
    by_state[n].append((pts, nxt))
  return roll_tables.RollTables(**arrays, reach_pts=tuple(
      tuple(options) for options in by_state))
