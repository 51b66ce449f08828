"""Orbax checkpoints of a solve: verified, and refused for another model.

A checkpoint holds the solver state (float64 arrays and counters) and sealed
JSON metadata (`integrity.seal`): a *fingerprint* (the rules, the state
layout and the dtype) and a checksum of every array. Restoring compares the
fingerprint with the current run and refuses a mismatch, naming what differs,
instead of silently reusing values of another model. A checkpoint that does
not verify (damaged bytes, a truncated or missing file, values that break an
invariant of the model) is moved aside to damaged_checkpoints/ with one log
line, and the previous one is tried; with none left the run starts over.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shutil
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Mapping

import jax
from absl import logging as absl_logging

from farkle_jax.solver import integrity, placement


class QuietOrbax(logging.Filter):
  """Drops the INFO chatter of Orbax, and its ERROR records: the failed
  save they report reaches the caller as a `CheckpointWriteError` (one
  line; --verbose prints its whole chain). Its warnings still show."""

  def filter(self, record):
    return ("orbax" not in record.pathname
            or logging.WARNING <= record.levelno < logging.ERROR)


class CheckpointMismatch(RuntimeError):
  """A checkpoint in the workdir was written for a different model."""


class CheckpointWriteError(OSError):
  """A checkpoint could not be written (a full disk, no permission): the
  run stops, its earlier checkpoints intact."""


def _write_error(error: Exception, what: str, directory: str
                 ) -> CheckpointWriteError:
  """One OSError for a failed save, with the OS's reason when the error
  (Orbax's, TensorStore's, or the OS's own) names one."""
  chain, e = [], error
  while e is not None and e not in chain:
    chain.append(e)
    e = e.__cause__ or e.__context__
  for e in chain:
    if isinstance(e, OSError) and e.errno:
      return CheckpointWriteError(e.errno, f"{what}: {e.strerror}",
                                  directory)
  text = " ".join(str(e) for e in chain)
  code = re.search(r"os_error_code='?(\d+)", text)
  if code:
    errno_ = int(code.group(1))
    return CheckpointWriteError(errno_, f"{what}: {os.strerror(errno_)}",
                                directory)
  first = (text.strip().splitlines() or [type(error).__name__])[0][:200]
  return CheckpointWriteError(errno.EIO, f"{what}: {first}", directory)


def _orbax():
  """Orbax, imported when a checkpoint is first made or read: the commands
  that only read a solved game, and every refusal of a bad flag, start
  0.17 s sooner without it. Its stragglers are quieted (`Stragglers`)."""
  import orbax.checkpoint
  Stragglers.install()
  return orbax.checkpoint


class Stragglers(logging.Filter):
  """Logs at DEBUG what a failed save's abandoned writes leave behind.

  Orbax runs each save in an event loop of its own and closes that loop as
  soon as one write fails (a full disk), while its other writes are still
  in flight. When they end, TensorStore's callback finds the loop closed
  (an unraisable `RuntimeError: Event loop is closed`), and asyncio reports
  the futures nobody awaited any more ("Future exception was never
  retrieved", "Task was destroyed but it is pending!"), each with a
  traceback, and Python warns of its coroutines never awaited ("coroutine
  ... was never awaited"), on stderr, at any moment up to the
  interpreter's exit. The
  failure itself has already reached the caller as a
  `CheckpointWriteError`: these are its echoes, so they are logged at DEBUG
  instead of printed. So is an event loop that a Ctrl-C left half closed,
  whose finalizer fails at the interpreter's exit after the interrupt's
  one line (`half_closed_loop`). Anything else goes to the hooks that were
  there.
  """

  _ABANDONED = ("exception was never retrieved",
                "Task was destroyed but it is pending")
  _WRITERS = ("orbax", "tensorstore")   # the packages whose echoes these are

  def filter(self, record: logging.LogRecord) -> bool:
    if not self.abandoned(record):
      return True
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)

  @classmethod
  def abandoned(cls, record: logging.LogRecord) -> bool:
    """Whether an asyncio record reports a write of Orbax's left behind."""
    message = record.getMessage()
    if not any(a in message for a in cls._ABANDONED):
      return False
    text = message
    if record.exc_info and record.exc_info[1] is not None:
      text += "".join(traceback.format_exception(record.exc_info[1]))
    return any(f"{os.sep}{name}{os.sep}" in text or f"{name}." in text
               for name in cls._WRITERS)

  @classmethod
  def orbax_coroutine(cls, coroutine) -> bool:
    """Whether a coroutine never awaited is Orbax's or TensorStore's."""
    where = getattr(getattr(coroutine, "cr_code", None), "co_filename", "")
    return any(f"{os.sep}{name}{os.sep}" in where for name in cls._WRITERS)

  @staticmethod
  def closed_loop(unraisable) -> bool:
    """Whether an unraisable exception is a callback, from outside Python
    (TensorStore's threads), that found its event loop closed."""
    tb = unraisable.exc_traceback
    return (isinstance(unraisable.exc_value, RuntimeError)
            and str(unraisable.exc_value) == "Event loop is closed"
            and tb is not None
            and tb.tb_frame.f_code.co_name == "call_soon_threadsafe")

  @staticmethod
  def half_closed_loop(unraisable) -> bool:
    """Whether an unraisable exception is an event loop's finalizer that
    found the loop half closed: a Ctrl-C landing while a save closes its
    loop stops `close()` after the self-pipe is gone but before the loop
    is marked closed, and the loop's `__del__` then closes it again."""
    tb, names = unraisable.exc_traceback, set()
    while tb is not None:
      names.add(tb.tb_frame.f_code.co_name)
      tb = tb.tb_next
    return (isinstance(unraisable.exc_value, AttributeError)
            and "_close_self_pipe" in names)

  @classmethod
  def install(cls) -> None:
    """Installs the filter on asyncio's logger, the unraisable hook and
    the hook of coroutines never awaited, once (again if something
    replaced a hook since)."""
    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, cls) for f in asyncio_log.filters):
      asyncio_log.addFilter(cls())
    cls._install_unawaited()
    if getattr(sys.unraisablehook, "_quiets_stragglers", False):
      return
    previous = sys.unraisablehook

    def hook(unraisable):
      if cls.closed_loop(unraisable):
        absl_logging.debug("a write of a failed save ended after its event "
                           "loop closed: %s", unraisable.exc_value)
      elif cls.half_closed_loop(unraisable):
        absl_logging.debug("an event loop an interrupt left half closed: %s",
                           unraisable.exc_value)
      else:
        previous(unraisable)

    hook._quiets_stragglers = True
    sys.unraisablehook = hook

  @classmethod
  def _install_unawaited(cls) -> None:
    # CPython looks this function up in `warnings` for each coroutine that
    # is collected without having been awaited (Python/_warnings.c).
    previous = getattr(warnings, "_warn_unawaited_coroutine", None)
    if previous is None or getattr(previous, "_quiets_stragglers", False):
      return

    def unawaited(coroutine):
      if cls.orbax_coroutine(coroutine):
        absl_logging.debug("a write of a failed save was never awaited: %s",
                           getattr(coroutine, "__qualname__", coroutine))
      else:
        previous(coroutine)

    unawaited._quiets_stragglers = True
    warnings._warn_unawaited_coroutine = unawaited


def _manager(directory: str, keep: int):
  ocp = _orbax()
  options = ocp.CheckpointManagerOptions(
      preservation_policy=ocp.checkpoint_managers.LatestN(keep),
      cleanup_tmp_directories=True, create=True)
  return ocp.CheckpointManager(os.path.abspath(directory), options=options)


class Checkpoints:
  """Saves and restores one run's solver state.

  Args:
    directory: where the checkpoints live (created if missing).
    fingerprint: JSON-able description of the model; must match to restore.
    keep: how many of the latest checkpoints to keep.
    retired: fingerprint fields older checkpoints may hold that no longer
      tell models apart (left out of the comparison).
  """

  def __init__(self, directory: str, fingerprint: Mapping[str, Any],
               keep: int = 2, retired: tuple[str, ...] = ()):
    self.fingerprint = dict(fingerprint)
    self.retired = retired
    self.manager = _manager(directory, keep)
    self._pending = None   # the step of the last save begun

  def latest_step(self) -> int | None:
    return self.manager.latest_step()

  def save(self, step: int, state: Mapping[str, jax.Array],
           extra: Mapping[str, Any] | None = None) -> None:
    """Saves `state` (a dict of arrays) at `step`, always (force=True)."""
    if step in self.manager.all_steps():
      return
    checksums = {k: integrity.array_checksum(placement.local_copy(v))
                 for k, v in state.items()}
    meta = integrity.seal({"fingerprint": self.fingerprint,
                           "checksums": checksums, **(extra or {})})
    self.wait()   # the previous save's failure is reported as its own
    try:
      self._pending = step
      args = _orbax().args
      self.manager.save(step, args=args.Composite(
          state=args.StandardSave(dict(state)),
          meta=args.JsonSave(meta)), force=True)
    except Exception as e:
      self._drop_unfinished()
      raise _write_error(e, f"could not save checkpoint {step}",
                         str(self.manager.directory)) from e

  def restore(self, like: Mapping[str, jax.Array],
              check: Callable[[dict[str, Any]], None] | None = None
              ) -> tuple[int, dict[str, jax.Array], dict[str, Any]] | None:
    """Restores the latest intact checkpoint shaped and typed like `like`.

    Args:
      like: {name: array or ShapeDtypeStruct} of the state.
      check: raises `integrity.Damaged` if a restored state breaks an
        invariant of the model.

    Returns:
      (step, state, meta), or None when no intact checkpoint is left.

    Raises:
      CheckpointMismatch: the checkpoint belongs to another model.
    """
    damaged, args = False, _orbax().args
    for step in sorted(self.manager.all_steps(), reverse=True):
      try:
        meta = integrity.unseal(self.manager.restore(
            step, args=args.Composite(meta=args.JsonRestore()))["meta"],
            f"checkpoint {step} metadata")
      except (MemoryError, PermissionError):  # not damage: say so
        raise
      except Exception as e:  # any read error means the same: unusable
        damaged = self._set_aside(step, e)
        continue
      self._check(meta.get("fingerprint", {}), step)
      try:
        state = self._restore_state(step, like, meta)
        if check is not None:
          check(state)
      except (MemoryError, PermissionError):  # not damage: say so
        raise
      except Exception as e:
        damaged = self._set_aside(step, e)
        continue
      return step, state, meta
    if damaged:
      absl_logging.warning("no intact checkpoint left in %s: starting over",
                           self.manager.directory)
    return None

  def _restore_state(self, step: int, like: Mapping[str, jax.Array],
                     meta: Mapping[str, Any]) -> dict[str, jax.Array]:
    target = {k: jax.ShapeDtypeStruct(v.shape, v.dtype,
                                      sharding=_sharding(v))
              for k, v in like.items()}
    args = _orbax().args
    state = self.manager.restore(step, args=args.Composite(
        state=args.StandardRestore(target)))["state"]
    for k, v in like.items():
      if state[k].dtype != v.dtype or state[k].shape != v.shape:
        raise integrity.Damaged(
            f"{k} restored as {state[k].dtype}{state[k].shape}, expected "
            f"{v.dtype}{v.shape}")
    integrity.verify_arrays({k: placement.local_copy(state[k]) for k in like},
                            meta.get("checksums", {}), f"checkpoint {step}")
    return dict(state)

  def _set_aside(self, step: int, error: Exception) -> bool:
    """Moves a damaged checkpoint out of the manager's sight; logs why."""
    src = os.path.join(str(self.manager.directory), str(step))
    dst_dir = os.path.join(os.path.dirname(str(self.manager.directory)),
                           "damaged_checkpoints")
    os.makedirs(dst_dir, exist_ok=True)
    dst = os.path.join(dst_dir, f"{step}-{time.strftime('%Y%m%d-%H%M%S')}")
    shutil.move(src, dst)
    self.manager.reload()
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    reason = reason.split(" See full TensorStore")[0]  # the rest is noise
    absl_logging.warning(
        "checkpoint %d is damaged (%s: %s); moved to %s, trying the one "
        "before", step, type(error).__name__, reason[:200], dst)
    return True

  def _check(self, saved: Mapping[str, Any], step: int) -> None:
    saved = {k: v for k, v in saved.items() if k not in self.retired}
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
    """Waits for an asynchronous save; CheckpointWriteError if it failed."""
    try:
      self.manager.wait_until_finished()
    except Exception as e:
      self._drop_unfinished()
      raise _write_error(e, f"could not save checkpoint {self._pending}",
                         str(self.manager.directory)) from e

  def close(self) -> None:
    """Waits for the last save and closes; CheckpointWriteError if it
    failed, whichever of the two hears of it."""
    try:
      self.wait()
      try:
        self.manager.close()
      except Exception as e:  # Orbax keeps a save's other failures till here
        raise _write_error(e, f"could not save checkpoint {self._pending}",
                           str(self.manager.directory)) from e
    except BaseException:   # reported as it is; closing may fail the same
      with contextlib.suppress(Exception):
        self.manager.close()
      self._drop_unfinished()
      raise

  def _drop_unfinished(self) -> None:
    """Removes the temporary directories of saves that did not finish."""
    directory = str(self.manager.directory)
    for name in os.listdir(directory) if os.path.isdir(directory) else ():
      if ".orbax-checkpoint-tmp" in name:
        shutil.rmtree(os.path.join(directory, name), ignore_errors=True)


def _sharding(x) -> jax.sharding.Sharding:
  """Where a restored array goes: like's own sharding, else device 0."""
  if getattr(x, "sharding", None) is not None:
    return x.sharding
  return jax.sharding.SingleDeviceSharding(jax.devices()[0])
