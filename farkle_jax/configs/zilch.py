"""The online game Zilch (farkles are zilches), to 10,000.

A 300 bank minimum, 500 points off for three
zilches (farkles) in a row, n of a kind doubling the triple for each die
beyond three, three pairs and the straight 1,500 each, and a six-dice roll
with nothing in it worth 500 (all six dice used, so the player rolls six
again). Goal 10,000; the score floor of the published Facebook model.

Source: the rules screen of Zilch (Blue Frog Gaming, 2008-), as summarised
in Wikipedia's "Farkle" article (section on Zilch).

  farkle solve --config zilch --workdir runs/zilch
"""

from farkle_jax.configs import facebook


def get_config():
  config = facebook.get_config()
  rules = config.rules
  rules.name = "zilch"
  rules.n_of_a_kind = "double"
  rules.three_pairs = 1500
  rules.straight = 1500
  rules.nothing_roll = 500
  return config
