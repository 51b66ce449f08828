"""The figures of runs and analyses: PNG files of some size, from tables
of either shape; figure files that could not be written refused in one
line before any work."""

import os

import numpy as np
import pytest
from absl import app

from farkle_jax.apps import plots

PNG = b"\x89PNG\r\n\x1a\n"


def is_png(path, least: int = 5000) -> bool:
  """Whether `path` holds a PNG image of at least `least` bytes."""
  with open(path, "rb") as f:
    head = f.read(len(PNG))
  return head == PNG and os.path.getsize(path) >= least


def _pair_table():
  """A two-player turn table as `queries.turn_table` shapes it."""
  names = [str(n) for n in range(6, 0, -1)]
  rows = [{"t": t, "W": {n: 0.4 + t / 1000 for n in names},
           "action": {n: "bank" if t >= 300 else "roll" for n in names},
           "unreachable": [5, 4, 3, 2, 1] if t == 0 else []}
          for t in range(0, 400, 50)]
  return {"b": 0, "d": 0, "f": 0, "e": 0, "columns": names,
          "states": list(range(6, 0, -1)), "rows": rows}


def _seat_table():
  """A turn table by scores, as `SeatGame.table` shapes it."""
  rows = [{"t": t, "cells": [
      {"n": n, "action": "bank" if t >= 300 else "roll",
       "reachable": t > 0 or n == 6, "win": [0.3 + t / 1000, 0.4, 0.3]}
      for n in range(6, 0, -1)]} for t in range(0, 400, 50)]
  return {"scores": [0, 0, 0], "counts": [0, 0, 0], "win": [0.3, 0.4, 0.3],
          "rows": rows}


def test_grid_reads_either_shape_of_table():
  for table in (_pair_table(), _seat_table()):
    totals, names, win, bank = plots._grid(table)
    assert totals == list(range(0, 400, 50))
    assert names == ["6", "5", "4", "3", "2", "1"]
    assert win.shape == bank.shape == (8, 6)
    # Unreachable: no colour; the start, six dice, is reached.
    assert not np.isnan(win[0, 0]) and np.isnan(win[0, 1:]).all()
    assert bank[-1].all() and not bank[0].any()


def test_every_figure_is_written_as_png(tmp_path):
  summary = {"residual_history": [0.5, 1e-3, 1e-9, 0.0], "iterations": 4,
             "tol": 1e-12, "norm": "absolute", "method": "ordered",
             "model_states": 1234}
  figures = {
      "pair": plots.turn_table(_pair_table(), "b=0 d=0"),
      "seat": plots.turn_table(_seat_table()),
      "komi": plots.komi([(0, 0.6), (50, 0.55), (100, 0.48)], 50),
      "seats": plots.seat_wins({"opening": [0.4, 0.33, 0.27],
                                "at 0,500,0": [0.3, 0.5, 0.2]}),
      "convergence": plots.convergence(summary, "runs/x"),
  }
  for name, fig in figures.items():
    path = tmp_path / f"{name}.png"
    plots.save(fig, str(path))
    assert is_png(path), name
  assert plots.sweeps(summary) == ([1, 2, 3, 4], [0.5, 1e-3, 1e-9, 0.0])
  # A resumed history that holds its last sweeps only ends at the last.
  assert plots.sweeps({"residual_history": [1e-3, 1e-6],
                       "iterations": 9})[0] == [8, 9]


def test_paths_that_cannot_be_written_are_refused(tmp_path):
  plots.check_path(None)   # no figure asked for
  plots.check_path(str(tmp_path / "fig.png"))
  plots.check_path(str(tmp_path / "fig.svg"))
  (tmp_path / "folder.png").mkdir()
  for path, says in [
      (tmp_path / "fig.xyz", ".xyz, not a format matplotlib writes"),
      (tmp_path / "fig", "no extension, not a format"),
      (tmp_path / "none" / "fig.png", f"no directory {tmp_path / 'none'}"),
      (tmp_path / "folder.png", "a directory, not a file"),
      ("/sys/farkle_fig.png", "cannot write in /sys"),
  ]:
    with pytest.raises(app.UsageError, match="^--plot=") as e:
      plots.check_path(str(path))
    assert says in str(e.value) and "\n" not in str(e.value)
  assert os.listdir(tmp_path) == ["folder.png"]   # no probe file left
