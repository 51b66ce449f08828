"""The shipped config `zilch` (farkle_jax/configs/zilch.py), by path:

  python -m farkle_jax.main --config configs/zilch.py --workdir runs/zilch

The same as `farkle solve --config zilch --workdir runs/zilch`.
"""

from farkle_jax.configs.zilch import get_config  # noqa: F401
