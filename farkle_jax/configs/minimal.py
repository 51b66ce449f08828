"""The minimal rules of Busche & Neller, to absolute max change < 1e-14.

  farkle solve --config minimal --workdir runs/minimal
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("minimal")
  config.solver.tol = 1e-14
  config.solver.norm = "absolute"
  return config
