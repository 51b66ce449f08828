"""The roll-multiset machinery on another dice game: the chance of a
Yahtzee within three rolls (experiments/yahtzee.py) against the published
figure and a brute force over ordered rolls."""

import functools
import itertools
import json
import os
import subprocess
import sys
from fractions import Fraction

from conftest import ROOT

DATA = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                   "yahtzee.json")))


@functools.lru_cache(maxsize=None)
def _ordered(kept: int, rolls: int) -> Fraction:
  """The same chance from every ordered roll (no multisets)."""
  if kept == 5:
    return Fraction(1)
  if rolls == 0:
    return Fraction(0)
  n, total = 5 - kept, Fraction(0)
  for roll in itertools.product(range(1, 7), repeat=n):
    most = max(roll.count(f) for f in range(2, 7))
    held = max(roll.count(1) + kept, most) if kept else max(
        roll.count(f) for f in range(1, 7))
    total += _ordered(held, rolls - 1)
  return total / 6 ** n


def test_yahtzee_within_three_rolls_is_the_published_fraction():
  out = subprocess.run([sys.executable, "experiments/yahtzee.py"], cwd=ROOT,
                       capture_output=True, text=True, env=dict(os.environ))
  assert out.returncode == 0, out.stderr
  got = Fraction(out.stdout.split("=")[1].strip())
  assert got == Fraction(DATA["five_of_a_kind_within_three_rolls"])
  assert got == _ordered(0, 3)
  one = out.stdout.splitlines()[1].split(":")[1].split("=")[0].strip()
  assert Fraction(one) == Fraction(DATA["five_of_a_kind_in_one_roll"])
