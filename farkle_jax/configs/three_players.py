"""Three players on the minimal rules to 10,000 (docs/model.md §8), to
absolute max change < 1e-12.

  farkle solve --config three_players --workdir runs/three_players

Four players: add --config.rules.players=4 and a lower --config.rules.goal
(BENCHMARKS.md says how far a CPU goes).
"""

from farkle_jax.configs import minimal


def get_config():
  config = minimal.get_config()
  config.rules.players = 3
  config.solver.tol = 1e-12
  return config
