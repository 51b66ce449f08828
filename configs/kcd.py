"""The shipped config `kcd` (farkle_jax/configs/kcd.py), by path:

  python -m farkle_jax.main --config configs/kcd.py --workdir runs/kcd

The same as `farkle solve --config kcd --workdir runs/kcd`.
"""

from farkle_jax.configs.kcd import get_config  # noqa: F401
