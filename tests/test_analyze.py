"""The analyze command line: its subcommands and its refusals."""

import json
import os
import subprocess
import sys

import pytest

from conftest import COMMANDS, ROOT


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
             workdir, "--a", "memorized", "--b", "optimal")
  assert out.returncode == 0, out.stderr
  with open(os.path.join(workdir, "analysis",
                         "evaluate_memorized_vs_optimal.json")) as f:
    res = json.load(f)
  assert 0 < res["first"] < 1 and res["overall"] < 0.5
  out = _cli("evaluate", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--a", "bank:33")
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
    (("evaluate", "--a", "goforit:0,0,0,0,0,-50/0,0,0,0,0,0"), "goforit B"),
    (("evaluate", "--a", "goforit:0,0,0,0,0,75/0,0,0,0,0,0"), "goforit B"),
    (("evaluate", "--b", "nobody"), "'nobody' is not allowed"),
    (("evaluate", "--nosuchflag"), "--nosuchflag: no such flag"),
    (("nosuchcommand",), "give one command"),
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
                                   nothing_roll=500, goal=2000)
  best = expected_score.solve(zilch).points_per_turn()
  assert f"{best:.4f} points per turn" in out.stdout
  assert "long run, with 500 off for 3 farkles in a row" in out.stdout
  assert "n=6: bank from t=None" in out.stdout
