"""The shipped config `cardgames_io` (farkle_jax/configs/cardgames_io.py), by path:

  python -m farkle_jax.main --config configs/cardgames_io.py --workdir runs/cardgames_io

The same as `farkle solve --config cardgames_io --workdir runs/cardgames_io`.
"""

from farkle_jax.configs.cardgames_io import get_config  # noqa: F401
