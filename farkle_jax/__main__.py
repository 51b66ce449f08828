"""`python -m farkle_jax`: the `farkle` command (apps/commands.py)."""

from farkle_jax.apps import commands

commands.main()
