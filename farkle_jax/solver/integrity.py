"""Checks that what is read back is what was written, and is a solution.

Every checkpoint and every saved result carries a SHA-256 checksum of each
array and of its JSON metadata (`seal` / `unseal`); before use its values are
checked against the invariants of the model (`check_probabilities`): win
probabilities are finite and lie in [0, 1]. A failure raises `Damaged`,
which says what is wrong; callers decide what to fall back on.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import numpy as np

SEAL = "checksum"  # the key of a sealed mapping's own checksum


class Damaged(ValueError):
  """Data that does not verify: its checksum or an invariant fails."""


def array_checksum(x) -> str:
  """SHA-256 of an array's dtype, shape and bytes."""
  a = np.ascontiguousarray(np.asarray(x))
  h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
  h.update(a.tobytes())
  return h.hexdigest()


def _json_checksum(obj: Mapping[str, Any]) -> str:
  text = json.dumps(obj, sort_keys=True, default=str, allow_nan=True)
  return hashlib.sha256(text.encode()).hexdigest()


def seal(obj: Mapping[str, Any]) -> dict[str, Any]:
  """`obj` with a checksum of its JSON text added under SEAL."""
  out = {k: v for k, v in obj.items() if k != SEAL}
  # Round trip first, so the checksum covers exactly what a reader sees.
  out = json.loads(json.dumps(out, default=str))
  return {**out, SEAL: _json_checksum(out)}


def unseal(obj: Any, what: str) -> dict[str, Any]:
  """The content of a sealed mapping; Damaged if it does not verify."""
  if not isinstance(obj, Mapping) or SEAL not in obj:
    raise Damaged(f"{what} has no checksum (written without one, by an "
                  "older version?)")
  content = {k: v for k, v in obj.items() if k != SEAL}
  if _json_checksum(content) != obj[SEAL]:
    raise Damaged(f"{what} does not match its checksum")
  return content


def verify_arrays(arrays: Mapping[str, Any], checksums: Mapping[str, str],
                  what: str) -> None:
  """Damaged unless every array matches its recorded checksum."""
  for name, x in arrays.items():
    if checksums.get(name) != array_checksum(x):
      raise Damaged(f"{what}: {name} does not match its checksum")


def check_probabilities(x, what: str) -> None:
  """Damaged unless every value is finite and within [0, 1].

  The bounds allow a few ulps of rounding (64 eps of the dtype).
  """
  a = np.asarray(x)
  if a.size == 0:
    return
  if not np.all(np.isfinite(a)):
    bad = np.flatnonzero(~np.isfinite(a.ravel()))
    raise Damaged(f"{what} holds {bad.size} non-finite values "
                  f"(first at flat index {bad[0]}: {a.ravel()[bad[0]]})")
  slack = 64 * np.finfo(a.dtype).eps if a.dtype.kind == "f" else 0
  low, high = float(a.min()), float(a.max())
  if low < -slack or high > 1 + slack:
    raise Damaged(f"{what} holds values outside [0, 1] (min {low:.6g}, "
                  f"max {high:.6g})")
