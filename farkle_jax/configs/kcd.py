"""The dice game of Kingdom Come: Deliverance (I and II), to a goal of 4,000.

  farkle solve --config kcd --workdir runs/kcd

The game's scoring sheet, as the in-game help (T) shows it and as the guides
at https://hzyry.com/news/play-dice-kingdom-deliverance-2-badges-scoring-combos.html
and https://www.rockpapershotgun.com/kingdom-come-deliverance-2-how-to-play-dice
list it: a 1 is 100, a 5 is 50; three of a kind is 1,000 for 1s and 100 times
the face otherwise, each further die of the kind doubling it (four 2s 400,
five 800, six 1,600); 1-2-3-4-5 is 500, 2-3-4-5-6 is 750, 1-2-3-4-5-6 is
1,500; there are no three pairs, no bank minimum (any scoring total may be
banked) and no farkle penalty. Setting all six dice aside rolls six again.

The goal is chosen at each table; 4,000 here (change rules.goal). The game's
badges (one-off powers) are not part of this model; its devil's head (a
joker face on some dice) is, with the dice of both games by name:
--config.rules.dice='("devils_head", "lucky")'. Weighted dice, six alike:
rules.dice, e.g. --config.rules.dice='(0.26,0.12,0.12,0.12,0.26,0.12)'.
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("minimal")
  config.rules.name = "kcd"
  config.rules.goal = 4000
  config.rules.n_of_a_kind = "double"
  config.rules.partial_straights = (500, 750)
  config.rules.straight = 1500
  config.rules.three_pairs = 0
  config.rules.bank_minimum = 50
  config.solver.tol = 1e-12
  config.solver.norm = "absolute"
  return config
