"""Roll combinatorics against brute force over all 6^n ordered rolls."""

import itertools
import json
import os
from fractions import Fraction

import pytest

import reference
from farkle_jax.game import rules as rules_lib
from farkle_jax.game import scoring

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))
PRESETS = {"facebook": rules_lib.facebook(), "minimal": rules_lib.minimal()}


@pytest.mark.parametrize("name", ["facebook", "minimal"])
@pytest.mark.parametrize("n", range(1, 7))
def test_score_sets_match_brute_force(name, n):
  out = scoring.outcomes(PRESETS[name], n)
  farkle, sets = reference.distribution(name, n)
  assert out.farkle == farkle
  assert dict(zip(out.score_sets, out.probs)) == sets
  assert out.farkle + sum(out.probs) == 1


def test_facebook_counts_and_farkle_probabilities():
  r = PRESETS["facebook"]
  counts = [len(scoring.outcomes(r, n).score_sets) for n in range(1, 7)]
  assert counts == [2, 5, 13, 30, 60, 118]  # model.md §2
  published = PUBLISHED["facebook"]["farkle_probability_by_n"]
  for n in range(1, 7):
    assert scoring.outcomes(r, n).farkle == Fraction(published[str(n)])


def test_minimal_example_score_set():
  ex = PUBLISHED["minimal"]["example_scorings"]
  counts = tuple(ex["roll"].count(face) for face in range(1, 7))
  got = scoring.score_set(PRESETS["minimal"], counts)
  assert [list(x) for x in got] == ex["S_r"]


def test_wikipedia_farkle_probabilities():
  wiki = PUBLISHED["wikipedia_probabilities"]
  assert scoring.outcomes(PRESETS["minimal"], 6).farkle == Fraction(
      wiki["six_dice_farkle_without_three_pairs"])
  for n in (1, 2, 3, 6):  # the exact entries (5 and 4 are printed rounded)
    assert scoring.outcomes(PRESETS["facebook"], n).farkle == Fraction(
        wiki["farkle_all_variants"][str(n)])


def _pattern_probability(pattern):
  """P(a six-dice roll whose sorted face counts are `pattern`)."""
  hits = sum(scoring.multiplicity(c) for c in scoring.multisets(6)
             if sorted(x for x in c if x) == pattern)
  return Fraction(hits, 6 ** 6)


@pytest.mark.parametrize("key,patterns", [
    ("three_pair", [[2, 2, 2]]),
    ("straight", [[1, 1, 1, 1, 1, 1]]),
    ("two_triplets", [[3, 3]]),
    ("five_of_a_kind", [[1, 5]]),
    ("six_of_a_kind", [[6]]),
    ("four_of_a_kind", [[1, 1, 4], [2, 4]]),
    ("three_of_a_kind", [[1, 1, 1, 3], [1, 2, 3]]),
])
def test_wikipedia_first_throw_odds(key, patterns):
  odds = PUBLISHED["wikipedia_probabilities"]["first_throw_six_dice"][key]
  expected = 1 / float(odds.split("in")[1])
  got = sum(_pattern_probability(p) for p in patterns)
  assert float(got) == pytest.approx(expected, rel=1e-4)


def test_multisets_cover_all_ordered_rolls():
  for n in range(1, 7):
    total = sum(scoring.multiplicity(c) for c in scoring.multisets(n))
    assert total == 6 ** n
    brute = {tuple(r.count(f) for f in range(1, 7))
             for r in itertools.product(range(1, 7), repeat=n)}
    assert brute == set(scoring.multisets(n))


def test_variants_are_data():
  r = rules_lib.facebook()
  # Six 1s: adding 4000, doubling 8000, fixed 3000.
  six_ones = (6, 0, 0, 0, 0, 0)
  assert scoring.score_set(r, six_ones)[-1] == (6, 4000)
  assert scoring.score_set(r.replace(n_of_a_kind="double"),
                           six_ones)[-1] == (6, 8000)
  assert scoring.score_set(r.replace(n_of_a_kind="fixed"),
                           six_ones)[-1] == (6, 3000)
  two_triples = (0, 3, 0, 0, 3, 0)
  assert scoring.score_set(r, two_triples)[-1] == (6, 700)
  assert scoring.score_set(r.replace(two_triplets=2500),
                           two_triples)[-1] == (6, 2500)
  four_and_pair = (0, 4, 2, 0, 0, 0)
  assert scoring.score_set(r, four_and_pair)[-1] == (4, 400)
  assert scoring.score_set(r.replace(four_kind_and_pair=1500),
                           four_and_pair)[-1] == (6, 1500)
  nothing = (0, 2, 2, 1, 0, 1)
  assert scoring.choices(r.replace(three_pairs=0), nothing) == set()
  assert scoring.choices(r.replace(three_pairs=0, nothing_roll=500),
                         nothing) == {(6, 500)}
  pocket = r.replace(triple_scores=(300, 200, 300, 400, 500, 600))
  assert scoring.score_set(pocket, (3, 0, 0, 0, 0, 0)) == (
      (1, 100), (2, 200), (3, 300))


def _pairs_only(counts) -> bool:
  """Six dice in pairs, a face allowed to repeat (brute force's view)."""
  return sum(counts) == 6 and all(c % 2 == 0 for c in counts)


def test_three_pairs_may_repeat_a_face_where_the_rules_say_so():
  """Zilch's any three pairs (a four of a kind with a pair, six of a kind)
  against all 6^6 ordered rolls: the six dice in pairs are worth at least
  the three pairs, the rest as if only different faces made three pairs."""
  distinct = rules_lib.facebook().replace(three_pairs=1500,
                                          n_of_a_kind="double")
  repeat = distinct.replace(three_pairs_repeat=True)
  in_pairs = four_and_pair = 0
  for roll in itertools.product(range(1, 7), repeat=6):
    counts = tuple(roll.count(f) for f in range(1, 7))
    before = dict(scoring.keeps(distinct, counts)).get(counts, 0)
    after = dict(scoring.keeps(repeat, counts)).get(counts, 0)
    if _pairs_only(counts):
      in_pairs += 1
      assert after == max(1500, before), counts
    else:
      assert after == before, counts
    if sorted(counts) == [0, 0, 0, 0, 2, 4]:
      four_and_pair += 1
  # 1,800 rolls of three different pairs, 450 of four and a pair, 6 of six
  # of a kind: a four of a kind with a pair is about one roll in a hundred.
  assert (in_pairs, four_and_pair) == (1800 + 450 + 6, 450)
  assert list(scoring.keeps(distinct, (0, 4, 2, 0, 0, 0))) == [
      ((0, 3, 0, 0, 0, 0), 200), ((0, 4, 0, 0, 0, 0), 400)]
  assert ((0, 4, 2, 0, 0, 0), 1500) in scoring.keeps(repeat,
                                                     (0, 4, 2, 0, 0, 0))
