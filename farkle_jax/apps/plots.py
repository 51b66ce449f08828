"""Pictures of solved runs and their analyses: the turn table as a heat
map, the komi curve, every seat's win probability, and the change per
sweep of a solve.

Each figure is a `matplotlib.figure.Figure` made without pyplot (no
display, no global state: a notebook shows it with `display`), and `save`
writes it to a file whose name `check_path` has accepted, PNG or any
format of `FORMATS`, before any work is done.
"""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from absl import app

if TYPE_CHECKING:
  from matplotlib.figure import Figure

# What the Agg, PDF, SVG and PS canvases write by themselves (pgf would
# need LaTeX, and some of Pillow's formats a plugin, at the end of a run).
FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif",
           "tiff")
# Row labels of a heat map: at most this many, so that they stay legible.
MAX_LABELS = 40


def check_path(path: str | None, flag: str = "plot") -> None:
  """Refuses (`app.UsageError`, one line) a figure file that could not be
  written: a format matplotlib does not write, a directory that does not
  exist or is not writable, a directory named as the file. None (no
  figure asked for) passes."""
  if path is None:
    return
  # matplotlib loads only when a figure is asked for (about a second of a
  # query's start otherwise).
  from matplotlib.backend_bases import FigureCanvasBase
  ext = os.path.splitext(path)[1][1:].lower()
  written = [f for f in FORMATS
             if f in FigureCanvasBase.get_supported_filetypes()]
  if ext not in written:
    raise app.UsageError(
        f"--{flag}={path}: {'.' + ext if ext else 'no extension'}, not a "
        f"format matplotlib writes; name a file ending in "
        f"{', '.join('.' + f for f in written)}")
  folder = os.path.dirname(os.path.abspath(path))
  if not os.path.isdir(folder):
    raise app.UsageError(f"--{flag}={path}: no directory {folder}")
  if os.path.isdir(path):
    raise app.UsageError(f"--{flag}={path}: a directory, not a file")
  try:   # the one sure test, for any user and file system
    with tempfile.NamedTemporaryFile(dir=folder, suffix="." + ext):
      pass
  except OSError as e:
    raise app.UsageError(f"--{flag}={path}: cannot write in {folder} "
                         f"({e.strerror or e})") from None
  if os.path.exists(path) and not os.access(path, os.W_OK):
    raise app.UsageError(f"--{flag}={path}: the file is not writable")


def _figure(width: float, height: float) -> Figure:
  """An empty figure of that size (inches), with no display behind it."""
  from matplotlib.figure import Figure
  return Figure(figsize=(width, height))


def save(fig: Figure, path: str) -> None:
  """Writes `fig` to `path` (format by its extension)."""
  fig.savefig(path, dpi=100, bbox_inches="tight")


def _grid(table: dict[str, Any]) -> tuple[list, list, np.ndarray,
                                          np.ndarray]:
  """(turn totals, column names, [T, C] mover's win (nan: no rolls reach
  it), [T, C] bool banks) of a turn table of either shape: the two-player
  one of `queries.turn_table`, or the one by scores of `table()`."""
  totals = [row["t"] for row in table["rows"]]
  if table["rows"] and "cells" in table["rows"][0]:
    names = (table.get("dice", {}).get("columns")
             or [str(c["n"]) for c in table["rows"][0]["cells"]])
    cells = [row["cells"] for row in table["rows"]]
    win = [[c["win"][0] if c.get("reachable", True) else np.nan
            for c in row] for row in cells]
    bank = [[c["action"] == "bank" for c in row] for row in cells]
  else:
    names = table.get("columns", [str(n) for n in range(6, 0, -1)])
    states = table.get("states", range(len(names), 0, -1))
    win = [[np.nan if s in row["unreachable"] else row["W"][c]
            for c, s in zip(names, states)] for row in table["rows"]]
    bank = [[row["action"][c] == "bank" for c in names]
            for row in table["rows"]]
  return totals, list(names), np.array(win, float), np.array(bank, bool)


def turn_table(table: dict[str, Any], title: str = "") -> Figure:
  """The mover's win probability as a heat map: rows the turn total,
  columns the dice to roll, 'B' where banking is best, blank where no
  rolls reach.

  Args:
    table: a turn table, two-player (`queries.turn_table`, `farkle table
      --b --d --json`) or by scores (`SeatGame.table`, `SolvedGame.table`).
    title: the figure's title.
  """
  totals, names, win, bank = _grid(table)
  fig = _figure(1.2 + 0.55 * len(names), min(0.18 * len(totals) + 1.5, 40))
  ax = fig.add_subplot()
  image = ax.imshow(win, aspect="auto", cmap="viridis")
  small = 7 if len(totals) <= 80 else 4
  for i, j in zip(*np.nonzero(bank & ~np.isnan(win))):
    ax.text(j, i, "B", ha="center", va="center", color="white",
            fontsize=small)
  ax.set_xticks(range(len(names)), names)
  ax.set_xlabel("dice to roll")
  every = max(1, -(-len(totals) // MAX_LABELS))
  ax.set_yticks(range(len(totals))[::every], totals[::every])
  ax.set_ylabel("turn total")
  ax.set_title(title, fontsize=9)
  fig.colorbar(image, label="win probability of the mover (B: bank)")
  return fig


def komi(curve: Sequence[tuple[int, float]], fairest: int,
         title: str = "") -> Figure:
  """The first player's win probability against the second player's
  start score k, the fairest k marked."""
  k, w = np.array(curve, float).T
  fig = _figure(6, 3.5)
  ax = fig.add_subplot()
  ax.plot(k, w, marker="o", markersize=3)
  ax.axhline(0.5, color="gray", linestyle="--", label="even game")
  best = int(np.argmin(np.abs(k - fairest)))
  ax.plot([k[best]], [w[best]], "r*", markersize=12,
          label=f"fairest komi: {fairest} ({w[best]:.4f})")
  ax.set_xlabel("komi k: the second player's start score")
  ax.set_ylabel("P(first player wins)")
  ax.set_title(title, fontsize=9)
  ax.legend()
  return fig


def seat_wins(bars: dict[str, Sequence[float]], title: str = "") -> Figure:
  """Every player's win probability, a group of bars per seat, a bar per
  named position (say the opening, and the scores asked)."""
  fig = _figure(6, 3.5)
  ax = fig.add_subplot()
  width = 0.8 / max(1, len(bars))
  for i, (name, win) in enumerate(bars.items()):
    x = np.arange(len(win)) + (i - (len(bars) - 1) / 2) * width
    drawn = ax.bar(x, win, width, label=name)
    ax.bar_label(drawn, fmt="%.3f", fontsize=7)
  seats = len(next(iter(bars.values()), ()))
  ax.set_xticks(range(seats), [f"player {i + 1}" for i in range(seats)])
  ax.set_ylabel("win probability")
  ax.set_title(title, fontsize=9)
  ax.legend()
  return fig


def sweeps(summary: dict[str, Any]) -> tuple[list[int], list[float]]:
  """(sweep numbers, max change of each) of a solve's summary.json: its
  residual history, which ends at its last sweep."""
  changes = [float(c) for c in summary["residual_history"]]
  last = int(summary.get("iterations", len(changes)))
  return list(range(last - len(changes) + 1, last + 1)), changes


def convergence(summary: dict[str, Any], title: str = "") -> Figure:
  """The max change of every sweep of a solve (its summary.json), on a log
  scale, with the tolerance."""
  numbers, changes = sweeps(summary)
  changes = np.array(changes)
  fig = _figure(6, 3.5)
  ax = fig.add_subplot()
  # A change of exactly 0 (a last sweep that changed nothing) has no place
  # on a log scale: left out.
  ax.semilogy(numbers, np.where(changes > 0, changes, np.nan), marker="o")
  ax.axhline(summary["tol"], color="gray", linestyle="--", label="tolerance")
  from matplotlib import ticker
  ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
  ax.set_xlabel("sweep")
  ax.set_ylabel(f"max change ({summary['norm']})")
  heading = f"{summary['method']}: {summary['model_states']:,} states"
  ax.set_title(f"{title}\n{heading}" if title else heading, fontsize=9)
  ax.legend()
  return fig


def distribution(turn: Any, turns: Any, title: str = "") -> Figure:
  """Two panels: one turn's points (a farkle as a bar of its own at the
  left) and P(target reached by turn k).

  Args:
    turn: a `distribution.TurnDistribution` (banked [top + 1] by units).
    turns: a `distribution.TurnsDistribution` (reached [K], k = 1..K), or
      None (the optimal play at a position: one panel).
    title: the figure's title.
  """
  fig = _figure(11 if turns else 5.5, 3.8)
  left, right = fig.subplots(1, 2) if turns else (fig.subplots(), None)
  t = np.nonzero(turn.banked)[0]
  width = 0.8 * turn.unit
  left.bar(t * turn.unit, turn.banked[t], width, label="banked")
  left.bar([-2 * turn.unit], [turn.farkle], 2 * width, color="tab:red",
           label=f"farkle ({turn.farkle:.3f})")
  # The far tail (long hot-dice runs) would squeeze the bars: cut at
  # 99.99% of the mass.
  cum = turn.farkle + np.cumsum(turn.banked[t])
  last = t[min(np.searchsorted(cum, 0.9999), len(t) - 1)]
  left.set_xlim(-4 * turn.unit, (last + 2) * turn.unit)
  left.set_xlabel("points of one turn")
  left.set_ylabel("probability")
  left.legend()
  if turns is None:
    fig.suptitle(title, fontsize=9)
    return fig
  k = np.arange(1, len(turns.reached) + 1)
  right.step(k, turns.reached, where="post", marker="o", markersize=3)
  right.axhline(1.0, color="gray", linestyle="--")
  right.set_xlabel("turn k")
  right.set_ylabel(f"P(reached {turns.target} by turn k)")
  right.set_title(f"mean {turns.mean:.3f} turns", fontsize=9)
  fig.suptitle(title, fontsize=9)
  return fig
