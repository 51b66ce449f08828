"""Strategies and their analysis: expected score, the memorized table,
turn policies, exact evaluation, simulation, the catalog of named strategies,
komi and the go-for-it search (docs/model.md §6).

Built on `farkle_jax.game` and `farkle_jax.solver`.
"""
