"""The solver: Bellman kernels, solve methods, checkpoints, the solve driver.

Built on `farkle_jax.game` only (docs/model.md §3-§5).
"""
