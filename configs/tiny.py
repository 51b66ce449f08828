"""The shipped config `tiny` (farkle_jax/configs/tiny.py), by path:

  python -m farkle_jax.main --config configs/tiny.py:facebook --workdir runs/tiny

The same as `farkle solve --config tiny:facebook --workdir runs/tiny`.
"""

from farkle_jax.configs.tiny import get_config  # noqa: F401
