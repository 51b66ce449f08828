"""The analyze command line: its subcommands and its refusals."""

import json
import os
import subprocess
import sys

import pytest

from conftest import COMMANDS, ROOT
from test_command_line import _one_line
from test_plots import is_png


def _cli(*args):
  """`python -m farkle_jax.apps.analyze args`, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS("farkle_jax.apps.analyze", *args)


def test_cli_maxscore_and_evaluate(tiny_runs):
  _, _, _, workdir = tiny_runs("minimal")
  out = _cli("maxscore", "--config", "configs/tiny.py:minimal",
             "--t_last", "200")
  assert out.returncode == 0, out.stderr
  assert "points per turn" in out.stdout and "n=6: bank from" in out.stdout
  assert "long run: no farkle penalty" in out.stdout
  out = _cli("evaluate", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--strategy", "memorized", "--versus",
             "optimal")
  assert out.returncode == 0, out.stderr
  with open(os.path.join(workdir, "analysis",
                         "evaluate_memorized_vs_optimal.json")) as f:
    res = json.load(f)
  assert 0 < res["first"] < 1 and res["overall"] < 0.5
  out = _cli("evaluate", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--strategy", "bank:33")
  assert out.returncode == 2 and "bank:33" in out.stderr


def test_cli_maxscore_long_run_with_a_penalty(tmp_path):
  out = _cli("maxscore", "--config", "configs/tiny.py:facebook",
             "--workdir", str(tmp_path))
  assert out.returncode == 0, out.stderr
  lines = [l for l in out.stdout.splitlines() if "farkle(s) in a row" in l]
  assert len(lines) == 3 and "worth -500.00 points" in lines[2]
  with open(tmp_path / "analysis" / "maxscore.json") as f:
    got = json.load(f)["long_run"]
  assert got["points_per_turn"] < json.load(
      open(tmp_path / "analysis" / "maxscore.json"))["points_per_turn"]
  assert got["relative_values"][0] == 0 and len(got["bank_from"]) == 3


@pytest.mark.parametrize("args, message", [
    (("simulate", "--games", "1"), "--games=1"),
    (("simulate", "--games", "0"), "--games=0"),
    (("simulate", "--seed", "-1"), "--seed=-1"),
    (("komi", "--k_max", "-100"), "--k_max=-100"),
    (("komi", "--k_max", "75"), "--k_max=75"),
    (("maxscore", "--t_last", "-50"), "--t_last=-50"),
    (("evaluate", "--start", "0"), "--start='0'"),
    (("evaluate", "--start", "0,25"), "--start=0,25"),
    (("evaluate", "--strategy", "goforit:0,0,0,0,0,-50/0,0,0,0,0,0"),
     "goforit B"),
    (("evaluate", "--strategy", "goforit:0,0,0,0,0,75/0,0,0,0,0,0"),
     "goforit B"),
    (("evaluate", "--versus", "nobody"), "'nobody' is not allowed"),
    (("evaluate", "--nosuchflag"), "--nosuchflag: no such flag"),
    (("nosuchcommand",), "give one command"),
    (("komi", "--plot", "/nonexistent/komi.png"), "no directory /nonexistent"),
    (("komi", "--plot", "komi.xyz"), "not a format matplotlib writes"),
    (("seats", "--plot", "/sys/seats.png"), "cannot write in /sys"),
    (("maxscore", "--plot", "max.png"), "maxscore draws no figure"),
])
def test_cli_refuses_bad_flags_in_one_line_before_any_compute(
    tmp_path, args, message):
  out = _cli(*args, "--config", "configs/tiny.py:minimal", "--workdir",
             str(tmp_path / "w"))
  assert out.returncode == 2, out.stderr
  assert out.stderr.strip().splitlines() == [
      line for line in out.stderr.strip().splitlines()
      if line.startswith("error: ") and message in line]
  assert not os.path.exists(tmp_path / "w")  # nothing solved


def test_cli_memorized_and_komi(tiny_runs):
  _, _, _, workdir = tiny_runs("minimal")
  out = _cli("memorized", "--config", "configs/tiny.py:minimal")
  assert out.returncode == 0, out.stderr
  assert out.stdout.startswith("n=6  t>=0:")
  out = _cli("komi", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--k_max", "100")
  assert out.returncode == 0, out.stderr
  assert "fairest komi:" in out.stdout


def test_maxscore_of_a_turn_that_need_not_end_finishes():
  """configs/zilch.py (six dice never farkle), on a smaller goal: the
  one-turn and the long-run figures come out."""
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.analyze", "maxscore",
       "--config", "configs/zilch.py", "--config.rules.goal=2000",
       "--t_last=300"], cwd=ROOT, capture_output=True, text=True,
      timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  from farkle_jax.game import rules
  from farkle_jax.strategy import expected_score
  zilch = rules.facebook().replace(name="zilch", n_of_a_kind="double",
                                   three_pairs=1500, straight=1500,
                                   nothing_roll=500, goal=2000,
                                   three_pairs_repeat=True)
  best = expected_score.solve(zilch).points_per_turn()
  assert f"{best:.4f} points per turn" in out.stdout
  assert "long run, with 500 off for 3 farkles in a row" in out.stdout
  assert "n=6: bank from t=None" in out.stdout


def test_without_a_command_it_names_every_command():
  line = _one_line(_cli(), 2, "give one command: ")
  for name in ("maxscore", "memorized", "evaluate", "simulate", "goforit",
               "komi", "seats", "seated", "convergence"):
    assert name in line
  _one_line(_cli("komi"), 2, "komi needs --config")
  _one_line(_cli("convergence"), 2, "convergence needs --workdir")


def test_komi_and_convergence_draw_their_figures(tiny_runs, tmp_path):
  _, _, _, workdir = tiny_runs("minimal")
  out = _cli("komi", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--k_max", "300", "--plot", str(tmp_path / "k.png"))
  assert out.returncode == 0, out.stderr
  assert f"plot: {tmp_path / 'k.png'}" in out.stdout
  assert is_png(tmp_path / "k.png")
  out = _cli("convergence", "--workdir", workdir, "--plot",
             str(tmp_path / "c.png"))
  assert out.returncode == 0, out.stderr
  with open(os.path.join(workdir, "summary.json")) as f:
    history = json.load(f)["residual_history"]
  lines = out.stdout.splitlines()
  assert lines[1] == "sweep  max change" and "converged after" in lines[0]
  assert [float(l.split()[1]) for l in lines[2:2 + len(history)]] == [
      float(f"{h:.3e}") for h in history]
  assert is_png(tmp_path / "c.png")
  _one_line(_cli("convergence", "--workdir", str(tmp_path / "none")), 1,
            "no solved run there")


def test_seats_draws_every_seats_win(three_players, tmp_path):
  import shutil
  workdir = tmp_path / "run"   # a copy: the analysis is saved beside it
  shutil.copytree(three_players, workdir)
  out = _cli("seats", "--config", "configs/minimal.py",
             "--config.rules.players=3", "--config.rules.goal=500",
             "--workdir", str(workdir), "--scores", "0,100,250", "--plot",
             str(tmp_path / "seats.png"))
  assert out.returncode == 0, out.stderr
  assert "at scores 0,100,250 (player to move first)" in out.stdout
  assert is_png(tmp_path / "seats.png")
