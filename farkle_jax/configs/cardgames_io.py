"""Farkle as played on cardgames.io, to 10,000.

Four, five and six of a kind 1,000,
2,000 and 3,000, three pairs 1,500, the straight 2,500; no farkle penalty
and no bank minimum (any turn total may be banked). Goal 10,000.

Source: the rules section of https://cardgames.io/farkle/.

  farkle solve --config cardgames_io --workdir runs/cardgames_io
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("facebook")
  rules = config.rules
  rules.name = "cardgames_io"
  rules.n_of_a_kind = "fixed"
  rules.fixed_n_of_a_kind = (1000, 2000, 3000)
  rules.three_pairs = 1500
  rules.straight = 2500
  rules.bank_minimum = 50
  rules.penalty = 0
  rules.floor = 0
  config.solver.tol = 1e-9
  config.solver.norm = "relative"
  return config
