"""The shipped config `default` (farkle_jax/configs/default.py), by path:

  python -m farkle_jax.main --config configs/default.py --workdir runs/default

The same as `farkle solve --config default --workdir runs/default`.
"""

from farkle_jax.configs.default import get_config  # noqa: F401
