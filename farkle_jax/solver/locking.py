"""One writer per workdir: an advisory lock held for the whole solve.

The lock is `fcntl.flock` on workdir/.lock, which the kernel releases when
its process ends however it ends (SIGKILL included), so a lock left by a
killed run is free at once and the next run takes it over; the file's
content (pid, host, start time) only names the holder in the refusal.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time


class WorkdirLocked(RuntimeError):
  """Another process is solving in this workdir."""


class WorkdirLock:
  """Holds workdir/.lock while open (a context manager).

  Raises:
    WorkdirLocked: another live process holds it; the message names it.
  """

  def __init__(self, workdir: str):
    self.path = os.path.join(workdir, ".lock")
    self._fd: int | None = None

  def __enter__(self) -> "WorkdirLock":
    if self._fd is not None:  # already held: entering again is a no-op
      return self
    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      holder = _describe(fd)
      os.close(fd)
      raise WorkdirLocked(
          f"{os.path.dirname(self.path)} is in use by another solve "
          f"({holder}); wait for it to finish or use another --workdir"
          ) from None
    try:
      os.ftruncate(fd, 0)
      os.write(fd, json.dumps({
          "pid": os.getpid(), "host": socket.gethostname(),
          "started": time.strftime("%Y-%m-%d %H:%M:%S")}).encode())
    except OSError:  # a full disk: do not keep the lock held
      os.close(fd)
      raise
    self._fd = fd
    return self

  def __exit__(self, *exc) -> None:
    if self._fd is not None:
      fcntl.flock(self._fd, fcntl.LOCK_UN)
      os.close(self._fd)
      self._fd = None


def _describe(fd: int) -> str:
  try:
    info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
    return (f"pid {info['pid']} on {info['host']}, started "
            f"{info['started']}")
  except (ValueError, KeyError, OSError):
    return "a process that has not yet written its name"
