"""The analyses of more than two players: every seat's win probability and
where the mover banks, from the solved game."""

import pytest

from farkle_jax.apps import seat_analyses
from farkle_jax.solver import configuration
from farkle_jax.strategy import seat_game


def test_seats_report_reads_the_solved_game(three_players, capsys):
  game = seat_game.SeatGame.load(three_players)
  out = seat_analyses.seats_report(game, "0,100,250")
  assert list(out["scores"]) == [0, 100, 250]
  assert out["win"] == game.win_probabilities((0, 100, 250)).tolist()
  assert out["bank_from"] == game.bank_thresholds((0, 100, 250))
  text = capsys.readouterr().out
  assert "win probability by seat" in text
  assert "at scores 0,100,250 (player to move first)" in text
  # No scores: every player at 0.
  assert list(seat_analyses.seats_report(game, None)["scores"]) == [0, 0, 0]


def test_a_seat_run_needs_a_workdir():
  config = configuration.base("minimal")
  config.rules.players = 3
  with pytest.raises(configuration.ConfigError, match="need --workdir"):
    seat_analyses.solved(config, None)
