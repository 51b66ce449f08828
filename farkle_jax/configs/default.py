"""The default run: Facebook rules to a goal of 3000 points, floor -1000.

Seconds on a 2-core CPU (the README's "How long things take"); prints the
first player's win probability and the opening-turn table.

  farkle solve --config default --workdir runs/default
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("facebook")
  config.rules.goal = 3000
  config.rules.floor = -1000
  config.solver.tol = 1e-9
  config.solver.norm = "relative"
  return config
