"""Farkle as sold in shops (PlayMonster's boxed game), with a final round.

Three 1s 300 and
three of any other face 100 x the face, four, five and six of a kind 1,000,
2,000 and 3,000, the straight, three pairs and four of a kind with a pair
1,500 each, two triplets 2,500; 500 in one turn to get on the board; when a
player reaches 10,000 the other gets a final turn and must finish higher.
No farkle penalty, no other bank minimum. The leader is followed up to
4,000 points past the goal (experiments/final_round_cap.py).

Source: the rule sheet in the box of PlayMonster's Farkle (2007-).

  farkle solve --config playmonster --workdir runs/playmonster
"""

from farkle_jax.configs import cardgames_io


def get_config():
  config = cardgames_io.get_config()
  rules = config.rules
  rules.name = "playmonster"
  rules.triple_scores = (300, 200, 300, 400, 500, 600)
  rules.straight = 1500
  rules.four_kind_and_pair = 1500
  rules.two_triplets = 2500
  rules.entry_minimum = 500
  rules.final_round = True
  rules.final_round_cap = 4000
  return config
