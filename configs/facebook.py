"""The Facebook Farkle model of the published figures: floor -2500.

  python -m farkle_jax.main --config configs/facebook.py --workdir runs/facebook
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("facebook")
  config.rules.floor = -2500
  config.solver.tol = 1e-9
  config.solver.norm = "relative"
  return config
