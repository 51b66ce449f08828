"""Orbax checkpoints of a solve, refused when they belong to another model.

A checkpoint holds the solver state (float64 arrays and counters) and a JSON
*fingerprint*: the rules, the state layout and the dtype. Restoring compares
the fingerprint with the current run and refuses a mismatch, naming what
differs, instead of silently reusing values of another model.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Mapping

import jax
import orbax.checkpoint as ocp
from orbax.checkpoint import checkpoint_managers


class QuietOrbax(logging.Filter):
  """Drops the INFO chatter of Orbax; its warnings and errors still show."""

  def filter(self, record):
    return record.levelno >= logging.WARNING or "orbax" not in record.pathname


class CheckpointMismatch(RuntimeError):
  """A checkpoint in the workdir was written for a different model."""


def _manager(directory: str, keep: int) -> ocp.CheckpointManager:
  options = ocp.CheckpointManagerOptions(
      preservation_policy=checkpoint_managers.LatestN(keep),
      cleanup_tmp_directories=True, create=True)
  return ocp.CheckpointManager(os.path.abspath(directory), options=options)


class Checkpoints:
  """Saves and restores one run's solver state.

  Args:
    directory: where the checkpoints live (created if missing).
    fingerprint: JSON-able description of the model; must match to restore.
    keep: how many of the latest checkpoints to keep.
  """

  def __init__(self, directory: str, fingerprint: Mapping[str, Any],
               keep: int = 2):
    self.fingerprint = dict(fingerprint)
    self.manager = _manager(directory, keep)

  def latest_step(self) -> int | None:
    return self.manager.latest_step()

  def save(self, step: int, state: Mapping[str, jax.Array],
           extra: Mapping[str, Any] | None = None) -> None:
    """Saves `state` (a dict of arrays) at `step`, always (force=True)."""
    meta = {"fingerprint": self.fingerprint, **(extra or {})}
    if step in self.manager.all_steps():
      return
    self.manager.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(dict(state)),
        meta=ocp.args.JsonSave(meta)), force=True)

  def restore(self, like: Mapping[str, jax.Array]
              ) -> tuple[int, dict[str, jax.Array], dict[str, Any]] | None:
    """Restores the latest checkpoint shaped and typed like `like`.

    Returns:
      (step, state, meta), or None when there is no checkpoint.

    Raises:
      CheckpointMismatch: the checkpoint belongs to another model.
    """
    step = self.manager.latest_step()
    if step is None:
      return None
    meta = self.manager.restore(step, args=ocp.args.Composite(
        meta=ocp.args.JsonRestore()))["meta"]
    self._check(meta.get("fingerprint", {}), step)
    target = {k: jax.ShapeDtypeStruct(v.shape, v.dtype,
                                      sharding=_sharding(v))
              for k, v in like.items()}
    state = self.manager.restore(step, args=ocp.args.Composite(
        state=ocp.args.StandardRestore(target)))["state"]
    for k, v in like.items():
      if state[k].dtype != v.dtype or state[k].shape != v.shape:
        raise CheckpointMismatch(
            f"checkpoint {step}: {k} restored as {state[k].dtype}"
            f"{state[k].shape}, expected {v.dtype}{v.shape}")
    return step, dict(state), meta

  def _check(self, saved: Mapping[str, Any], step: int) -> None:
    if saved == self.fingerprint:
      return
    diffs = []
    for key in sorted(set(saved) | set(self.fingerprint)):
      a, b = saved.get(key), self.fingerprint.get(key)
      if a == b:
        continue
      if isinstance(a, dict) and isinstance(b, dict):
        for sub in sorted(set(a) | set(b)):
          if a.get(sub) != b.get(sub):
            diffs.append(f"{key}.{sub}: checkpoint {a.get(sub)!r}, "
                         f"this run {b.get(sub)!r}")
      else:
        diffs.append(f"{key}: checkpoint {a!r}, this run {b!r}")
    raise CheckpointMismatch(
        f"the checkpoint at step {step} in {self.manager.directory} was "
        f"written for a different model ({'; '.join(diffs)}); use another "
        "--workdir or delete that checkpoint directory")

  def wait(self) -> None:
    self.manager.wait_until_finished()

  def close(self) -> None:
    self.manager.wait_until_finished()
    self.manager.close()


def _sharding(x) -> jax.sharding.Sharding:
  if isinstance(x, jax.Array):
    return x.sharding
  return jax.sharding.SingleDeviceSharding(jax.devices()[0])
