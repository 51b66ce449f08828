"""The package's public face: the names of `__all__`, loaded on first use."""

import subprocess
import sys

import numpy as np

import farkle_jax
from conftest import ROOT
from farkle_jax.strategy.solved_game import Position, SolvedGame


def test_every_public_name_resolves():
  for name in farkle_jax.__all__:
    assert getattr(farkle_jax, name) is not None, name


def test_importing_the_package_loads_no_solver_or_strategy():
  out = subprocess.run(
      [sys.executable, "-c", "import sys, farkle_jax; print(sorted(m for m "
       "in sys.modules if m.startswith('farkle_jax.')))"], cwd=ROOT,
      capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "[]"


def test_load_and_solve_are_the_package_functions(tmp_path, tiny_runs):
  game = farkle_jax.load(shipped="default")
  assert game.first_player_win() == SolvedGame.shipped(
      "default").first_player_win()
  assert farkle_jax.Position is Position
  config = farkle_jax.base_config("minimal")
  config.rules.goal = 1000
  config.solver.update(tol=1e-14, norm="absolute", chunk_keys=1024)
  summary = farkle_jax.solve(config, str(tmp_path))
  assert summary["converged"]
  np.testing.assert_array_equal(farkle_jax.load(str(tmp_path)).run.w0,
                                tiny_runs("minimal")[0])


def test_one_solve_and_one_load_for_any_number_of_players(three_players):
  """`solve` is the one pipeline; `load` gives a run of more players as a
  SeatGame, whose opening is the run's summary."""
  from farkle_jax.solver import driver
  from farkle_jax.strategy.seat_game import SeatGame
  assert farkle_jax.solve is driver.run
  game = farkle_jax.load(three_players)
  assert isinstance(game, SeatGame) and game is not None
  np.testing.assert_allclose(game.win_probabilities((0, 0, 0)),
                             game.summary["seat_win"], rtol=0, atol=0)
  assert farkle_jax.SeatGame is SeatGame
