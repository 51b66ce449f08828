"""farkle_jax: exact solver of Farkle in JAX.

What a library user calls (each loaded on first use, so `import farkle_jax`
stays light for the command-line tools):

    config = farkle_jax.base_config("facebook")     # every field, a preset
    summary = farkle_jax.solve(config, "runs/fb")    # solve (resumes)
    game = farkle_jax.load("runs/fb")                # or load(): shipped
    game.win_probability(farkle_jax.Position(b=0, d=0))
    game.advise(farkle_jax.Position(0, 0), (6, 5, 3, 3, 3, 2))

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
}

__all__ = sorted(_PUBLIC) + ["load"]


def load(workdir: str | None = None, shipped: str = "facebook",
         allow_unconverged: bool = False):
  """The solved game in `workdir` (a finished two-player run), or the
  values that ship with the package (`shipped`: "facebook" or "default")."""
  solved_game = importlib.import_module("farkle_jax.strategy.solved_game")
  return solved_game.SolvedGame.open(workdir, shipped, allow_unconverged)


def __getattr__(name: str):
  if name not in _PUBLIC:
    raise AttributeError(f"module 'farkle_jax' has no attribute {name!r}")
  module, attribute = _PUBLIC[name]
  return getattr(importlib.import_module(module), attribute)
