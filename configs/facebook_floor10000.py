"""The shipped config `facebook_floor10000` (farkle_jax/configs/facebook_floor10000.py), by path:

  python -m farkle_jax.main --config configs/facebook_floor10000.py --workdir runs/facebook_floor10000

The same as `farkle solve --config facebook_floor10000 --workdir runs/facebook_floor10000`.
"""

from farkle_jax.configs.facebook_floor10000 import get_config  # noqa: F401
