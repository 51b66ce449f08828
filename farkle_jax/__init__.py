"""farkle_jax: exact solver of Farkle in JAX.

What a library user calls (each loaded on first use, so `import farkle_jax`
stays light for the command-line tools):

    config = farkle_jax.base_config("facebook")     # every field, a preset
    summary = farkle_jax.solve(config, "runs/fb")    # solve (resumes)
    game = farkle_jax.load("runs/fb")                # or load(): shipped
    game.win_probability(farkle_jax.Position(b=0, d=0))
    game.advise(farkle_jax.Position(0, 0), (6, 5, 3, 3, 3, 2))

    config.rules.players = 3                         # any number of players
    farkle_jax.solve(config, "runs/fb3")
    farkle_jax.load("runs/fb3").win_probabilities((0, 500, 1200))
    farkle_jax.advise(game, (0, 0), roll=(6, 5, 3, 3, 3, 2))["choices"][0]
    farkle_jax.evaluate(game, "maxscore", "optimal")["overall"]

The solve is float64 by default, so importing the package enables JAX's 64-bit
mode (it must be on before any array exists) without importing JAX: where
JAX is not imported yet, through the environment variable JAX_ENABLE_X64,
which JAX reads as it is imported (so child processes inherit it); a query
of a solved game is NumPy alone and never imports JAX.

On a GPU, XLA runs a compiled loop's condition on the host by default: a
round trip to the host at every iteration, where a sweep of the wavefront
takes over a thousand small ones. The package asks XLA, through the
environment variable XLA_FLAGS (read as the first backend starts), to run
loops and conditionals on the card instead (as CUDA graphs: command
buffers with conditional nodes): on one H200, a sweep of the published
model 0.338 -> 0.302 s, three players to 2,000 2 min 1 s -> 1 min 33 s
(BENCHMARKS.md, "Loops on the card"). A CPU ignores it; a setting of
that flag already in XLA_FLAGS is kept as it is.
"""

import importlib
import os
import sys

if "jax" in sys.modules:
  sys.modules["jax"].config.update("jax_enable_x64", True)
else:
  os.environ["JAX_ENABLE_X64"] = "1"

LOOPS_ON_DEVICE = "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL"
if "xla_gpu_enable_command_buffer" not in os.environ.get("XLA_FLAGS", ""):
  os.environ["XLA_FLAGS"] = " ".join(
      filter(None, (os.environ.get("XLA_FLAGS"), LOOPS_ON_DEVICE)))

# Public name -> (module, attribute).
_PUBLIC = {
    "base_config": ("farkle_jax.solver.configuration", "base"),
    "solve": ("farkle_jax.solver.driver", "run"),
    "SolvedGame": ("farkle_jax.strategy.solved_game", "SolvedGame"),
    "Position": ("farkle_jax.strategy.solved_game", "Position"),
    "SeatGame": ("farkle_jax.strategy.seat_game", "SeatGame"),
}

__all__ = sorted(list(_PUBLIC) + ["load", "advise", "evaluate"])


def load(workdir: str | None = None, shipped: str = "facebook",
         allow_unconverged: bool = False):
  """The solved game in `workdir`, or the values that ship with the
  package (`shipped`: "facebook" or "default"): a `SolvedGame` for a
  two-player run, a `SeatGame` (every seat's win probabilities, advice and
  turn tables by the players' scores) for a run of more players."""
  # The seat engine (JAX) only for a run of the seat engine: its summary
  # holds every seat's win ("seat_win").
  results = importlib.import_module("farkle_jax.solver.results")
  if workdir and "seat_win" in (results.read_summary(workdir) or {}):
    seat_game = importlib.import_module("farkle_jax.strategy.seat_game")
    return seat_game.SeatGame.load(workdir, allow_unconverged)
  solved_game = importlib.import_module("farkle_jax.strategy.solved_game")
  return solved_game.SolvedGame.open(workdir, shipped, allow_unconverged)


def advise(game, scores, roll=None, t: int = 0, n: int | None = None,
           counts=None) -> dict:
  """What to do, as data, in a game of any number of players (`load`).

  Args:
    game: a loaded game (`SolvedGame` or `SeatGame`).
    scores: every player's banked score, from the player to move on.
    roll: the faces rolled; None asks bank or roll at turn total `t` with
      `n` dice instead.
    t: the turn total so far (points).
    n: the dice to roll (default 6; with a roll, the dice it shows, and
      given, the roll must show that many).
    counts: every player's farkles in a row (rules with a penalty).

  Returns:
    With a roll, "choices": every way to set dice aside, best first, each
    with every player's win probability after it, and "then": bank or roll
    after the best one. Without, "best" with the "bank" and "roll" vectors.
  """
  return game.advice(tuple(scores), t, n, roll, counts)


def evaluate(game, a: str, b: str = "optimal", start=(0, 0)) -> dict:
  """Exact win probability of strategy `a` against `b` (names of the
  strategy catalog: optimal, maxscore, bank:300, ...) in a two-player game
  loaded with `load`, as first player, second and overall."""
  catalog = importlib.import_module("farkle_jax.strategy.catalog")
  figures = importlib.import_module("farkle_jax.strategy.figures")
  if game.players != 2:
    raise catalog.StrategyError("evaluate compares strategies of two "
                                "players; this game has "
                                f"{game.players}")
  for name in (a, b):
    catalog.check_name(name, game.layout.unit, game.rules.goal)
  ctx = catalog.Context(game.layout, game.run.roll, game.run.w0)
  result = figures.against(ctx, [a], b, tuple(start))[a]
  return {"a": a, "b": b, "first": result.first, "second": result.second,
          "overall": result.overall}


def __getattr__(name: str):
  if name not in _PUBLIC:
    raise AttributeError(f"module 'farkle_jax' has no attribute {name!r}")
  module, attribute = _PUBLIC[name]
  return getattr(importlib.import_module(module), attribute)
