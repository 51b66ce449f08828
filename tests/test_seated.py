"""A guest strategy among optimal players: the exact evaluation gives the
solved values back when the guest plays optimally, and Monte Carlo play
agrees with it within 3 standard errors."""

import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from farkle_jax.solver import configuration, multiplayer_run
from farkle_jax.strategy import seat_game, seated


@pytest.fixture(scope="module")
def games(tmp_path_factory):
  out = {}
  for players in (2, 3):
    config = configuration.base("minimal")
    config.rules.update(goal=1000, players=players)
    config.solver.update(tol=1e-14, norm="absolute")
    workdir = str(tmp_path_factory.mktemp(f"p{players}"))
    multiplayer_run.run(config, workdir)
    out[players] = workdir
  game = seat_game.SeatGame.load(out[3])
  pair = np.load(f"{out[2]}/start_values.npy")[..., 0]
  return game, pair


def test_an_optimal_guest_gives_the_solved_values(games):
  game, pair = games
  x = seated.evaluate(game.seats, game.w0, pair, "optimal")
  if game.summary["unsettled_keys"]:
    pytest.skip("keys without a pure equilibrium: the midpoint differs")
  for j in range(3):
    np.testing.assert_allclose(x[j], game.w0, rtol=0, atol=1e-13)


def test_monte_carlo_agrees_with_the_exact_evaluation(games):
  game, pair = games
  exact = seated.evaluate(game.seats, game.w0, pair, "two_player")
  turns = seated.pair_turns(game.rules, pair)
  opening = (0,) * 6
  for seat, n in ((0, 1500), (2, 1500)):
    wins = seated.simulate(game, turns, seat, n, seed=seat)
    p = wins / n
    se = np.sqrt(exact[seat][opening] * (1 - exact[seat][opening]) / n)
    assert (np.abs(p - exact[seat][opening]) < 3 * se).all(), (p, seat)
  assert abs(exact[0][opening].sum() - 1) < 1e-12


def test_analyze_refuses_two_player_commands_for_three():
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.analyze", "evaluate", "--config",
       "configs/three_players.py", "--workdir", "/nonexistent"],
      cwd=ROOT, capture_output=True, text=True)
  assert out.returncode == 2
  assert out.stderr.startswith("error: evaluate: for exactly two players")
  assert len(out.stderr.strip().splitlines()) == 1
