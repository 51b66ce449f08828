"""The Facebook model with the score floor lowered to -10,000 (1.7 G states).

  python -m farkle_jax.main --config configs/facebook_floor10000.py --workdir runs/facebook_floor10000
"""

from configs import facebook


def get_config():
  config = facebook.get_config()
  config.rules.floor = -10_000
  return config
