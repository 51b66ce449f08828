"""Progress of long commands: a bar for a solve (how far the max change has
fallen to the tolerance, with the sweep, the change and the ETA), and one
for work counted in items (games simulated).

A solve's length is not known in sweeps, but its max change falls roughly
geometrically, so the bar measures decades: 0% at the largest change seen so
far, 100% at the tolerance. `main` shows it when its output is a terminal
(log lines otherwise); a notebook passes `tqdm.auto.tqdm` to get its widget.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from typing import Any, Callable, Iterator

import tqdm
from absl import logging

from farkle_jax.solver.driver import ChunkReport

STEPS = 1000  # bar resolution


class ResidualBar:
  """Callable for `driver.run(..., on_chunk=...)`; close it when done.

  Args:
    bar: a tqdm-like factory (`tqdm.tqdm`, `tqdm.auto.tqdm`), called as
      `bar(total=..., desc=..., **options)`.
    **options: passed to the factory (e.g. `file=`, `leave=`).
  """

  def __init__(self, bar: Callable[..., Any] = tqdm.tqdm, **options):
    self._factory, self._options = bar, options
    self._bar = None
    self._top = 0.0  # the largest change seen so far

  def fraction(self, residual: float, tol: float) -> float:
    """Share of the decades from the largest change seen down to tol."""
    if not residual < math.inf:
      return 0.0
    self._top = max(self._top, residual)
    if residual < tol:
      return 1.0
    if self._top <= tol or residual <= 0:
      return 0.0
    return min(1.0, math.log(self._top / residual)
               / math.log(self._top / tol))

  def __call__(self, report: ChunkReport) -> None:
    if self._bar is None:
      self._bar = self._factory(
          total=STEPS, bar_format="solve {percentage:3.0f}%|{bar}| {desc}",
          **self._options)
    self._bar.n = round(STEPS * self.fraction(report.residual, report.tol))
    self._bar.set_description_str(
        f"sweep {report.iteration}, max change {report.residual:.2e} "
        f"(tol {report.tol:.0e}), eta {report.eta}", refresh=False)
    self._bar.refresh()

  def close(self) -> None:
    if self._bar is not None:
      self._bar.close()


LOG_SECONDS = 10  # a line at least this often where no bar is shown


def say(line: str) -> None:
  """A progress line on stderr (where no bar is shown), also a log
  record."""
  print(line, file=sys.stderr, flush=True)
  logging.debug("%s", line)


class ResidualLines:
  """Callable for `driver.run(..., on_chunk=...)` where no bar can be
  shown (output to a file or a pipe): a plain line with the sweep, the
  change and the ETA, at the first chunk and then every LOG_SECONDS."""

  def __init__(self, every: float = LOG_SECONDS):
    self._every, self._last = every, -math.inf

  def __call__(self, report: ChunkReport) -> None:
    now = time.time()
    if now - self._last >= self._every or report.residual < report.tol:
      say(f"sweep {report.iteration}: max change {report.residual:.2e} "
          f"(tol {report.tol:.0e}), elapsed {report.elapsed:.0f} s, "
          f"eta {report.eta}")
      self._last = now

  def close(self) -> None:
    pass


class CountBar:
  """Callable as `on_progress(done, total)`: a bar with the ETA when the
  output is a terminal, else a log line every LOG_SECONDS; close it when
  done.

  Args:
    what: the items counted, e.g. "games".
    bar: a tqdm-like factory, or None for log lines (default: a bar when
      stderr is a terminal).
  """

  def __init__(self, what: str, bar: Callable[..., Any] | None = None):
    if bar is None and sys.stderr.isatty():
      bar = tqdm.tqdm
    self._what, self._factory, self._bar = what, bar, None
    self._start = self._logged = time.time()

  def __call__(self, done: int, total: int) -> None:
    if self._factory is not None:
      if self._bar is None:
        self._bar = self._factory(total=total, unit=f" {self._what}",
                                  unit_scale=True)
      self._bar.n = done
      self._bar.refresh()
      return
    now = time.time()
    if now - self._logged >= LOG_SECONDS and 0 < done < total:
      eta = (now - self._start) * (total - done) / done
      say(f"{self._what} {done:,} of {total:,} ({100 * done / total:.0f}%), "
          f"eta {eta:.0f} s")
      self._logged = now

  def close(self) -> None:
    if self._bar is not None:
      self._bar.close()


@contextlib.contextmanager
def for_solve(kind: str = "auto", verbose: bool = False,
              show: bool = True) -> Iterator[Callable | None]:
  """A progress display for `driver.run(..., on_chunk=...)`, closed on
  leaving, or None for log records only (and where `show` is False: a
  process that does not speak for a solve).

  Args:
    kind: "bar", "lines" (a plain line every LOG_SECONDS), "log", or
      "auto": a bar on a terminal, lines otherwise, and log records alone
      with `verbose` (they show the progress; a bar would be cut by them).
    verbose: whether log records reach the terminal (-v).
    show: whether to show anything.
  """
  if kind == "auto":
    kind = ("log" if verbose else
            "bar" if sys.stderr.isatty() else "lines")
  display = ({"bar": ResidualBar, "lines": ResidualLines,
              "log": lambda: None}[kind]() if show else None)
  try:
    yield display
  finally:
    if display is not None:
      display.close()
