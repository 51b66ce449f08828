"""Tiny games for tests: the reference rules with a goal of 1000 points.

  farkle solve --config tiny:facebook --workdir /tmp/t
  farkle solve --config tiny:minimal --workdir /tmp/t
"""

from farkle_jax.solver import configuration


def get_config(preset="facebook"):
  config = configuration.base(preset)
  config.rules.goal = 1000
  if preset == "facebook":
    config.rules.floor = -500
  config.solver.tol = 1e-14
  config.solver.norm = "absolute"
  config.solver.chunk_keys = 1024
  config.checkpoint.every = 5
  return config
