"""The package's public face: the names of `__all__`, loaded on first use."""

import os
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


def _xla_flags_after_import(flags: str | None) -> str:
  """XLA_FLAGS as a fresh process sees it after importing the package,
  started with `flags` (None: unset)."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  if flags is not None:
    env["XLA_FLAGS"] = flags
  out = subprocess.run(
      [sys.executable, "-c", "import os, farkle_jax; "
       "print(os.environ.get('XLA_FLAGS'))"], cwd=ROOT, env=env,
      capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  return out.stdout.strip()


def test_the_package_asks_for_loops_on_the_gpu_unless_told_otherwise():
  wanted = "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL"
  assert _xla_flags_after_import(None) == wanted
  assert _xla_flags_after_import("--xla_dump_to=/tmp/x") == (
      "--xla_dump_to=/tmp/x " + wanted)
  # A user's own choice of command buffers stays, untouched.
  assert _xla_flags_after_import("--xla_gpu_enable_command_buffer=") == (
      "--xla_gpu_enable_command_buffer=")


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


def test_advise_answers_alike_whichever_engine_solved_two_players(
    tiny_runs, seats_runs):
  """The same two-player game (minimal rules to 1,000) solved by the scalar
  chunk engine and by the seat engine: `advise` gives the same ranked
  choices and win vectors from either loaded game."""
  chunk, seats = farkle_jax.load(tiny_runs("minimal")[3]), farkle_jax.load(
      seats_runs(2))
  assert (chunk.players, seats.players) == (2, 2)
  assert type(chunk) is not type(seats)
  for scores, t, roll in (((0, 0), 0, (6, 5, 3, 3, 3, 2)),
                          ((450, 700), 150, (1, 5, 2, 2)),
                          ((900, 0), 50, (1, 1, 4, 6, 6)),
                          ((300, 850), 0, (2, 3, 4, 6, 6, 4))):
    x, y = (farkle_jax.advise(g, scores, roll=roll, t=t)
            for g in (chunk, seats))
    assert [c["kept"] for c in x["choices"]] == [
        list(c["kept"]) for c in y["choices"]]
    for cx, cy in zip(x["choices"], y["choices"]):
      np.testing.assert_allclose(cx["win"], cy["win"], rtol=0, atol=1e-9)
    assert ("then" in x) == ("then" in y)
    if "then" in x:
      assert x["then"]["best"] == y["then"]["best"]
    np.testing.assert_allclose(chunk.win_probabilities(scores),
                               seats.win_probabilities(scores), atol=1e-9)
  decided = farkle_jax.advise(chunk, (0, 0), t=350, n=2)
  assert decided["best"] in ("bank", "roll") and len(decided["roll"]) == 2


def test_evaluate_gives_the_solver_value_for_optimal_against_itself(
    tiny_runs):
  game = farkle_jax.load(tiny_runs("minimal")[3])
  both = farkle_jax.evaluate(game, "optimal", "optimal")
  assert abs(both["first"] - game.first_player_win()) < 1e-9
  assert abs(both["overall"] - 0.5) < 1e-12
  weaker = farkle_jax.evaluate(game, "bank:300")
  assert weaker["overall"] < 0.5 and weaker["b"] == "optimal"


def test_both_solved_games_answer_the_one_game_protocol(tiny_runs, seats_runs):
  """Every front end asks only what `game_protocol.Game` names; both
  solved-game classes answer all of it with the same parameters."""
  import inspect
  from farkle_jax.strategy.game_protocol import Game
  games = (farkle_jax.load(tiny_runs("minimal")[3]),
           farkle_jax.load(seats_runs(3)))
  names = [n for n in vars(Game) if not n.startswith("_")]
  assert {"advice", "table", "choices_at", "after_farkle"} <= set(names)
  for game in games:
    assert isinstance(game, Game)
    for name in names:
      want = getattr(Game, name)
      if callable(want):
        got = getattr(type(game), name)
        assert list(inspect.signature(got).parameters) == list(
            inspect.signature(want).parameters), (type(game), name)
  assert [g.players for g in games] == [2, 3]
