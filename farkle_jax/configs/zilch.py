"""The online game Zilch (farkles are zilches), to 10,000.

A 300 bank minimum, 500 points off for three zilches (farkles) in a
row, n of a kind doubling the triple for each die beyond three, three
pairs and the straight 1,500 each, and a six-dice roll with nothing in it
worth 500 (all six dice used, so the player rolls six again). Three pairs
are any three pairs: a face may repeat, so a four of a kind with a pair
(2-2-2-2-3-3) is three pairs, 1,500 and a free roll (about one six-dice
roll in a hundred). Goal 10,000; the score floor of the published Facebook
model.

Sources: the rules screen of Zilch (Blue Frog Gaming, 2008-), as summarised
in Wikipedia's "Farkle" article (section on Zilch); the rules page of
zilch.playr.co.uk (http://zilch.playr.co.uk/rules.php: "Any three pairs,
1500 points, free roll", with the same doubling, bank minimum, penalty and
nothing roll).

  farkle solve --config zilch --workdir runs/zilch
"""

from farkle_jax.configs import facebook


def get_config():
  config = facebook.get_config()
  rules = config.rules
  rules.name = "zilch"
  rules.n_of_a_kind = "double"
  rules.three_pairs = 1500
  rules.three_pairs_repeat = True
  rules.straight = 1500
  rules.nothing_roll = 500
  return config
