"""The shipped config `three_players` (farkle_jax/configs/three_players.py), by path:

  python -m farkle_jax.main --config configs/three_players.py --workdir runs/three_players

The same as `farkle solve --config three_players --workdir runs/three_players`.
"""

from farkle_jax.configs.three_players import get_config  # noqa: F401
