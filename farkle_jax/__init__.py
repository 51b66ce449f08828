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

The solve is float64 by default, so importing the package enables JAX's 64-bit
mode (it must be on before any array exists).
"""

import importlib

import jax

jax.config.update("jax_enable_x64", True)

# Public name -> (module, attribute).
_PUBLIC = {
    "base_config": ("farkle_jax.solver.configuration", "base"),
    "solve": ("farkle_jax.solver.driver", "run"),
    "SolvedGame": ("farkle_jax.strategy.solved_game", "SolvedGame"),
    "Position": ("farkle_jax.strategy.solved_game", "Position"),
    "SeatGame": ("farkle_jax.strategy.seat_game", "SeatGame"),
}

__all__ = sorted(_PUBLIC) + ["load"]


def load(workdir: str | None = None, shipped: str = "facebook",
         allow_unconverged: bool = False):
  """The solved game in `workdir`, or the values that ship with the
  package (`shipped`: "facebook" or "default"): a `SolvedGame` for a
  two-player run, a `SeatGame` (every seat's win probabilities, advice and
  turn tables by the players' scores) for a run of more players."""
  seat_game = importlib.import_module("farkle_jax.strategy.seat_game")
  if seat_game.is_seats_run(workdir):
    return seat_game.SeatGame.load(workdir, allow_unconverged)
  solved_game = importlib.import_module("farkle_jax.strategy.solved_game")
  return solved_game.SolvedGame.open(workdir, shipped, allow_unconverged)


def __getattr__(name: str):
  if name not in _PUBLIC:
    raise AttributeError(f"module 'farkle_jax' has no attribute {name!r}")
  module, attribute = _PUBLIC[name]
  return getattr(importlib.import_module(module), attribute)
