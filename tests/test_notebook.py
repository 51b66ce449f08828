"""experiments/colab.ipynb runs end to end on a tiny config, and a second
run (a fresh kernel, as after a runtime restart) resumes from its
checkpoint."""

import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "experiments", "colab.ipynb")


def _execute(monkeypatch, workdir: str) -> str:
  """Runs every cell in a fresh kernel; returns the text it printed."""
  monkeypatch.setenv("FARKLE_JAX_CONFIG", "configs/tiny.py:facebook")
  monkeypatch.setenv("FARKLE_JAX_WORKDIR", workdir)
  nb = nbformat.read(NOTEBOOK, as_version=4)
  NotebookClient(nb, timeout=600, kernel_name="python3", resources={
      "metadata": {"path": os.path.join(ROOT, "experiments")}}).execute()
  text, images = [], 0
  for cell in nb.cells:
    for out in cell.get("outputs", []):
      text.append(out.get("text", ""))
      images += "image/png" in out.get("data", {})
  assert images == 2  # the convergence plot and the turn table
  return "".join(text)


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
