"""The devil's head (a wild face in place of a 1, Kingdom Come:
Deliverance): jokers scored against a brute-force partition scorer that
shares no code with the package, the examples its sources give, roll
tables and a solve against the plain reference over dice positions, and
the refusals."""

import importlib
from fractions import Fraction

import numpy as np
import pytest

import reference
from conftest import solved_once
from test_dice import sets_by_state
from farkle_jax.game import dice as dice_lib
from farkle_jax.game import hand_rolls, roll_tables, scoring
from farkle_jax.game import rules as rules_lib
from farkle_jax.solver import configuration, results
from farkle_jax.strategy import expected_score

FAIR = (Fraction(1, 6),) * 6
# Four dice that never show 1 or 5 (a joker may be the 5 of their run).
MUTE = (Fraction(0), Fraction(1, 4), Fraction(1, 4), Fraction(1, 4),
        Fraction(0), Fraction(1, 4))
# Two devil's head dice (positions 0 and 1) and four of those.
HAND = (FAIR, FAIR, MUTE, MUTE, MUTE, MUTE)
WILD = (0, 1)
DICE = ("devils_head", "devils_head") + (tuple(map(float, MUTE)),) * 4


def _kcd(**changes):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.update(changes)
  return config


def _rules(**changes) -> rules_lib.Rules:
  return configuration.check(_kcd(**changes))[0]


def test_jokers_score_as_the_brute_force_partitions():
  """Every multiset of real dice with one to six jokers, six dice at most:
  the best split (`wild_totals`) against the partition scorer."""
  r, checked = _rules(), 0
  for jokers in range(1, 7):
    for n in range(0, 7 - jokers):
      for u in scoring.multisets(n):
        mine = scoring.wild_totals(r, u, jokers)
        want = reference.best_points_wild("kcd", u, jokers)
        assert (max(mine) if mine else reference.NEG) == want, (u, jokers)
        checked += 1
  assert checked == 792   # sum over jokers j of the multisets of 6 - j dice


@pytest.mark.parametrize("faces, jokers, points", [
    ((1, 1), 1, 1000),            # two 1s and a devil's head: three 1s
    ((1, 1, 1), 1, 2000),         # three 1s and one: four 1s
    ((1, 2, 3, 4), 1, 500),       # the run 1-5
    ((2, 3, 4, 6), 1, 750),       # the run 2-6
    ((), 1, None),                # alone it has no value
    ((), 3, None),                # all devil's heads: no score
    ((1,), 1, None),              # never a single 1 or 5 itself
    ((2, 2, 5, 5), 1, 300),       # 2-2-J and 5-5, or nothing else whole
])
def test_the_examples_of_the_sources(faces, jokers, points):
  u = tuple(faces.count(f) for f in range(1, 7))
  got = scoring.wild_totals(_rules(), u, jokers)
  assert (max(got) if got else None) == points


def _state(left: tuple[int, ...], k: dice_lib.Kinds, states) -> int:
  """The package's dice state (1..S) of the reference's dice positions:
  kinds A (devil's heads) and B."""
  kind = (0, 0, 1, 1, 1, 1)
  counts = tuple(sum(1 for i in left if kind[i] == j)
                 for j in range(len(k.counts)))
  return states.index(counts) + 1


def test_roll_tables_equal_the_ordered_enumeration():
  """Dice states of the hand against every ordered roll of the dice at the
  positions it stands for, the devil's heads scored by the brute force."""
  r = _rules(dice=DICE)
  k = dice_lib.kinds(r.dice)
  assert k.counts == (2, 4) and k.wild == (1, 0)
  assert not r.dice_alike and dice_lib.labels(DICE)[-1] == "AABBBB"
  states = dice_lib.states(k.counts)
  for left in [(0, 1, 2, 3, 4, 5), (0, 3, 4), (0, 1, 5), (1,), (2, 3)]:
    farkle, sets = reference.hand_distribution("kcd", HAND, left, WILD)
    out = scoring.hand_outcomes(r, states[_state(left, k, states) - 1])
    assert out.farkle == farkle, left
    mine = {tuple(sorted(o)): p for o, p in zip(out.option_sets, out.probs)}
    assert mine == sets_by_state(
        sets, lambda rest: _state(rest, k, states)), left


def test_expected_score_and_a_solve_equal_the_plain_reference(
    tmp_path_factory):
  r = _rules(dice=DICE)
  sol = expected_score.solve(r, roll_tables.build(r), cap=4000)
  want = reference.expected_hand_turn("kcd", HAND, 4000, WILD)
  assert abs(sol.points_per_turn() - want) < 1e-9
  config = _kcd(goal=300, dice=DICE)
  config.solver.tol = 1e-15
  w0 = results.load(solved_once(tmp_path_factory, "kcd_devil", config))[0]
  ref = reference.solve_hands("kcd", 300, (HAND,), wild=(WILD,))
  np.testing.assert_allclose(w0[..., 0, 0], ref[..., 0, 0], rtol=0,
                             atol=1e-12)


def test_six_devils_heads_are_lettered_as_their_legend_says():
  assert dice_lib.labels(("devils_head",) * 6)[-1] == "AAAAAA"
  assert dice_lib.legend(("devils_head",) * 6).startswith(
      "A = dice 1, 2, 3, 4, 5, 6 (devils_head: fair; its 1 is a devil's")


def test_a_roll_names_the_devils_head_and_never_keeps_it_alone():
  r = _rules(dice=("devils_head",))
  assert "its 1 is a devil's head" in dice_lib.legend(r.dice)
  roll = hand_rolls.parse(r, 0, ("A1", "B1", "B1", "B3"))
  kept = {k: pts for k, pts, _ in hand_rolls.options(r, roll)}
  assert kept[("A1", "B1", "B1")] == 1000 and kept[("B1",)] == 100
  assert not any(k == ("A1",) for k in kept)


@pytest.mark.parametrize("changes, says", [
    ({"dice": ("devils_head",), "nothing_roll": 500}, "nothing_roll=500"),
    ({"hands": ((), ("devils_head",)), "nothing_roll": 500},
     "config.rules.hands"),
    ({"dice": ("devils_head",), "final_round": True}, "final_round=True"),
])
def test_a_joker_where_the_sheet_has_no_meaning_for_it_is_refused(
    changes, says):
  with pytest.raises(configuration.ConfigError, match=says) as e:
    configuration.check(_kcd(**changes))
  assert "\n" not in str(e.value) and "wild face" in str(e.value)
