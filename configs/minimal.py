"""The shipped config `minimal` (farkle_jax/configs/minimal.py), by path:

  python -m farkle_jax.main --config configs/minimal.py --workdir runs/minimal

The same as `farkle solve --config minimal --workdir runs/minimal`.
"""

from farkle_jax.configs.minimal import get_config  # noqa: F401
