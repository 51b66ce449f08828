"""The Facebook model with the score floor lowered to -10,000 (1.7 G states).

  farkle solve --config facebook_floor10000 --workdir runs/facebook_floor10000
"""

from farkle_jax.configs import facebook


def get_config():
  config = facebook.get_config()
  config.rules.floor = -10_000
  return config
