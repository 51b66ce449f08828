"""The table command: the turn table as text, and as a heat map with
--plot, of two players and by every player's score; a figure file that
cannot be written refused in one line before any work."""

import json

import pytest

from conftest import COMMANDS
from test_command_line import _one_line
from test_plots import is_png


def _table(*args):
  """`python -m farkle_jax.apps.table args`, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS("farkle_jax.apps.table", *args)


def test_plot_of_a_two_player_table(tiny_runs, tmp_path):
  workdir = tiny_runs("minimal")[3]
  path = tmp_path / "table.png"
  out = _table("--workdir", workdir, "--b", "0", "--d", "0", "--plot",
               str(path))
  assert out.returncode == 0, out.stderr
  assert "turn table b=0 d=0" in out.stdout
  assert out.stdout.rstrip().endswith(f"plot: {path}")
  assert is_png(path)
  # With --json the output stays JSON alone; any format matplotlib writes.
  out = _table("--workdir", workdir, "--b", "450", "--d", "700", "--json",
               "--plot", str(tmp_path / "table.svg"))
  assert out.returncode == 0, out.stderr
  assert json.loads(out.stdout)["b"] == 450
  assert (tmp_path / "table.svg").read_text().lstrip().startswith("<?xml")


def test_plot_of_a_table_by_scores(three_players, tmp_path):
  path = tmp_path / "scores.png"
  out = _table("--workdir", three_players, "--scores", "0,250,300",
               "--t_max", "450", "--plot", str(path))
  assert out.returncode == 0, out.stderr
  assert out.stdout.startswith("turn table scores 0,250,300")
  assert is_png(path)


@pytest.mark.parametrize("plot, words", [
    ("{tmp}/none/table.png", ("no directory {tmp}/none",)),
    ("{tmp}/table.xyz", (".xyz, not a format matplotlib writes", ".png")),
    ("{tmp}/table", ("no extension",)),
    ("/sys/farkle_table.png", ("cannot write in /sys",)),
])
def test_a_plot_that_cannot_be_written_is_refused_first(tmp_path, plot,
                                                        words):
  """Refused before the run is read: here there is none, which would
  fail otherwise (exit 1)."""
  plot = plot.format(tmp=tmp_path)
  out = _table("--workdir", str(tmp_path / "no_run"), "--plot", plot)
  _one_line(out, 2, f"--plot={plot}: ",
            *(w.format(tmp=tmp_path) for w in words))
