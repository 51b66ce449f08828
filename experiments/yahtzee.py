"""A check of the roll-multiset machinery on another dice game: the
probability of five of a kind with five dice within three rolls (a Yahtzee),
always keeping the most common face and rolling the rest.

  python experiments/yahtzee.py

Uses the project's own enumeration of rolls as multisets with their
multiplicities (`farkle_jax.game.scoring`), in exact fractions. The published
figure is about 4.6% (Wikipedia, "Yahtzee", section Probabilities:
2,783,176 / 60,466,176 = 0.04603); tests/test_yahtzee.py compares.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from farkle_jax.game import scoring

DICE = 5


@functools.lru_cache(maxsize=None)
def chance(kept: int, rolls: int) -> Fraction:
  """P(five of a kind) holding `kept` dice of one face with `rolls` left.

  The held face is face 1 (by symmetry); after a roll the player holds
  whichever face is now most common (the held one on a tie).
  """
  if kept == DICE:
    return Fraction(1)
  if rolls == 0:
    return Fraction(0)
  n = DICE - kept
  total = Fraction(0)
  for counts in scoring.multisets(n):
    if kept == 0:
      held = max(counts)
    else:
      held = max(kept + counts[0], max(counts[1:]))
    total += scoring.multiplicity(counts) * chance(held, rolls - 1)
  return total / 6 ** n


def main() -> None:
  p = chance(0, 3)
  print(f"P(five of a kind within three rolls, keeping the most common face)"
        f" = {p.numerator}/{p.denominator} = {float(p):.6f}")
  for rolls in (1, 2):
    q = chance(0, rolls)
    print(f"  within {rolls} roll(s): {q.numerator}/{q.denominator} = "
          f"{float(q):.6f}")


if __name__ == "__main__":
  main()
