"""Copies a finished run's start-of-turn values, compressed, into the
package (farkle_jax/data/<name>), where `advise`, `play` and `serve` find
them without a --workdir.

  python -m farkle_jax.main --config configs/facebook.py --workdir runs/facebook
  python experiments/ship_values.py --workdir runs/facebook --name facebook
  python -m farkle_jax.main --config configs/default.py --workdir runs/default
  python experiments/ship_values.py --workdir runs/default --name default

Only a verified, converged run is copied; tests/test_shipped.py checks that
what ships is a fixed point of the rules it claims.
"""

import os

from absl import app, flags

import farkle_jax  # noqa: F401  (enables float64)
from farkle_jax.apps import command_line
from farkle_jax.solver import results
from farkle_jax.strategy import solved_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Finished run to ship.")
_NAME = flags.DEFINE_enum("name", None, solved_game.SHIPPED, "Name it ships as.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  into = os.path.join(solved_game.DATA, _NAME.value)
  results.compress(_WORKDIR.value, into)
  size = sum(os.path.getsize(os.path.join(into, f)) for f in os.listdir(into))
  print(f"shipped {_WORKDIR.value} as {into} ({size / 1e6:.2f} MB)")


if __name__ == "__main__":
  command_line.run(main, required=("workdir", "name"))
