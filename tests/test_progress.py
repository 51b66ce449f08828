"""The solve's progress bar: decades of the max change down to the tol."""

import io
import math
import os
import subprocess
import sys

import pytest

from farkle_jax.apps import progress
from farkle_jax.solver.driver import ChunkReport

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_fraction_counts_decades_from_the_largest_change_to_tol():
  bar = progress.ResidualBar()
  assert bar.fraction(math.inf, 1e-9) == 0.0
  assert bar.fraction(10.0, 1e-9) == 0.0          # the largest seen
  assert bar.fraction(1e-4, 1e-9) == pytest.approx(0.5)
  assert bar.fraction(100.0, 1e-9) == 0.0         # a rise resets the top
  assert bar.fraction(1e-4, 1e-9) == pytest.approx(6 / 11)
  assert bar.fraction(1e-10, 1e-9) == 1.0


def test_bar_shows_percent_sweep_change_and_eta():
  out = io.StringIO()
  bar = progress.ResidualBar(file=out)
  bar(ChunkReport(5, 10.0, 1e-9, 3.0, "?"))
  bar(ChunkReport(10, 1e-4, 1e-9, 6.0, "0:00:07"))
  bar.close()
  last = out.getvalue().replace("\r", "\n").strip().splitlines()[-1]
  assert last.startswith("solve  50%")
  assert "sweep 10, max change 1.00e-04 (tol 1e-09), eta 0:00:07" in last


def test_main_shows_the_bar_when_asked(tmp_path):
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.main", "--config",
       "configs/tiny.py:facebook", f"--workdir={tmp_path}/w", "--progress=bar"],
      cwd=ROOT, capture_output=True, text=True, env=dict(os.environ))
  assert out.returncode == 0, out.stderr[-2000:]
  frames = out.stderr.replace("\r", "\n")
  assert "solve 100%" in frames and "it=" not in frames  # bar, not log lines
  assert "first-player win probability: 0.604836" in out.stdout
