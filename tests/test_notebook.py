"""experiments/colab.ipynb runs end to end on a tiny config, and a second
run (a fresh kernel, as after a runtime restart) resumes from its
checkpoint."""

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import notebook_run  # noqa: E402  (experiments/, on the path above)


def _execute(monkeypatch, workdir: str) -> str:
  """Runs every cell in a fresh kernel; returns the text it printed."""
  for name in ("FARKLE_JAX_CONFIG", "FARKLE_JAX_WORKDIR", "PYTHONPATH"):
    monkeypatch.setenv(name, os.environ.get(name, ""))  # restored after
  text, images = notebook_run.execute("configs/tiny.py:facebook", workdir)
  assert images == 2  # the convergence plot and the turn table
  return text


@pytest.mark.thorough
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_notebook_solves_plots_and_resumes(tmp_path, monkeypatch):
  workdir = str(tmp_path / "run")
  first = _execute(monkeypatch, workdir)
  assert "backend: cpu" in first
  assert "first-player win probability 0.604835511" in first
  assert "resumed from checkpoint None" in first
  again = _execute(monkeypatch, workdir)
  assert "first-player win probability 0.604835511" in again
  sweeps = re.search(r"(\d+) sweeps", first).group(1)
  assert f"resumed from checkpoint {sweeps}" in again   # the last one
