"""The shipped config `playmonster` (farkle_jax/configs/playmonster.py), by path:

  python -m farkle_jax.main --config configs/playmonster.py --workdir runs/playmonster

The same as `farkle solve --config playmonster --workdir runs/playmonster`.
"""

from farkle_jax.configs.playmonster import get_config  # noqa: F401
