"""A guest strategy among optimal players: the exact evaluation gives the
solved values back when the guest plays optimally, and Monte Carlo play
agrees with it within 3 standard errors."""

import json

import numpy as np
import pytest

from conftest import COMMANDS
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.strategy import evaluation, expected_score, policies
from farkle_jax.strategy import seat_game, seated


@pytest.fixture(scope="module")
def games(seats_runs):
  game = seat_game.SeatGame.load(seats_runs(3))
  pair = np.load(f"{seats_runs(2)}/start_values.npy")[..., 0]
  return game, pair


def test_max_score_guest_of_two_matches_the_two_player_evaluator(games):
  """With N = 2 the seated evaluation of the maximum-score guest is the
  two-player evaluation of maximum score against optimal play, computed by
  a separate forward pass (strategy.evaluation)."""
  game, pair = games
  rules = game.rules.replace(players=2)
  seats, layout = SeatsLayout(rules), StateLayout(rules)
  roll = roll_tables.build(rules)
  w = np.stack([pair, 1 - pair], axis=-1)
  x = seated.evaluate(seats, w, None, "max_score")
  res = evaluation.evaluate(
      policies.max_score(layout, expected_score.solve(rules, roll)),
      policies.optimal(pair, layout, roll), layout, roll)
  np.testing.assert_allclose(x[0][..., 0], res.a_to_move, rtol=0,
                             atol=1e-12)
  np.testing.assert_allclose(x[1][..., 0], res.b_to_move, rtol=0,
                             atol=1e-12)
  assert res.first < pair[0, 0, 0, 0] - 0.01     # the guest loses ground


def test_an_optimal_guest_gives_the_solved_values(games):
  game, pair = games
  x = seated.evaluate(game.seats, game.w0, pair, "optimal")
  # Where no pure equilibrium exists the stored midpoint is no policy's
  # value: this game has none of those keys.
  assert game.summary["unsettled_keys"] == 0
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


def test_monte_carlo_agrees_for_the_max_score_guest(games):
  game = games[0]
  exact = seated.evaluate(game.seats, game.w0, None, "max_score")[1]
  opening, n = (0,) * 6, 1500
  wins = seated.simulate(game, seated.max_score_table(game.seats), 1, n,
                         seed=7)
  se = np.sqrt(exact[opening] * (1 - exact[opening]) / n)
  assert (np.abs(wins / n - exact[opening]) < 3 * se).all(), wins
  assert exact[opening][1] < game.w0[opening][1] - 0.01


def _analyze(*args):
  """`python -m farkle_jax.apps.analyze args`, forked from a worker that
  has imported JAX already (conftest.CommandLines): a start-up saved."""
  return COMMANDS("farkle_jax.apps.analyze", *args)


@pytest.mark.parametrize("command, config, says", [
    ("evaluate", "configs/three_players.py",
     "error: evaluate: for exactly two players (rules.players = 3); with "
     "more, use seats or seated"),
    ("seats", "configs/minimal.py",
     "error: seats: for more than two players (rules.players = 2); with "
     "two, use "),
    ("seated", "configs/three_players.py --config.rules.final_round=True",
     "error: seated: rules without a final round only"),
])
def test_analyze_commands_for_the_other_number_of_players(command, config,
                                                          says):
  out = _analyze(command, "--config", *config.split(), "--workdir",
                 "/nonexistent")
  assert out.returncode == 2
  assert out.stderr.startswith(says), out.stderr
  assert len(out.stderr.strip().splitlines()) == 1


def test_analyze_seats_and_seated_from_the_command_line(tmp_path):
  flags = ["--config", "configs/minimal.py", "--config.rules.players=3",
           "--config.rules.goal=500", "--workdir", str(tmp_path)]
  out = _analyze("seats", *flags, "--scores", "0,100,250")
  assert out.returncode == 0, out.stderr
  assert "at scores 0,100,250 (player to move first)" in out.stdout
  out = _analyze("seated", *flags, "--guest", "max_score", "--games", "300")
  assert out.returncode == 0, out.stderr
  saved = json.load(open(tmp_path / "analysis" / "seated.json"))
  assert saved["guest"] == "max_score" and len(saved["rows"]) == 3
  for row in saved["rows"]:
    assert row["exact"] < row["optimal"]
    assert abs(row["simulated"] - row["exact"]) < 3 * row["se"]
  assert out.stdout.count("max_score wins") == 3
