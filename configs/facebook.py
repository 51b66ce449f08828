"""The shipped config `facebook` (farkle_jax/configs/facebook.py), by path:

  python -m farkle_jax.main --config configs/facebook.py --workdir runs/facebook

The same as `farkle solve --config facebook --workdir runs/facebook`.
"""

from farkle_jax.configs.facebook import get_config  # noqa: F401
