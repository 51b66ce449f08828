"""Maximum expected score against the plain recursion of tests/reference."""

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables, rules
from farkle_jax.strategy import expected_score

RULES = {"facebook": rules.facebook(), "minimal": rules.minimal()}


@pytest.mark.parametrize("name", ["facebook", "minimal"])
@pytest.mark.parametrize("bank_at", [None, 500])
def test_expected_score_matches_reference(name, bank_at):
  r = RULES[name]
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll, bank_at=bank_at, cap=40_000)
  ref = reference.expected_turn(name, bank_at=bank_at, cap=40_000)
  for (n, t), v in ref.items():
    if t <= 20_000:
      assert abs(sol.expected[t // 50, n - 1] - v) < 1e-9, (n, t)


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_cap_does_not_change_the_policy(name):
  r = RULES[name]
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll)
  big = expected_score.solve(r, roll, cap=2 * sol.cap * sol.unit)
  half = sol.cap // 2
  np.testing.assert_array_equal(sol.bank[:half], big.bank[:half])
  np.testing.assert_allclose(sol.expected[:half], big.expected[:half],
                             rtol=1e-13)


def test_farkle_rate_by_enumeration_of_one_roll():
  # Banking at any t > 0 ends every turn after one roll: P(farkle) is the
  # six-dice farkle probability and the mean is the mean best first score.
  r = rules.minimal()
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll, bank_at=50)
  farkle, sets = reference.distribution("minimal", 6)
  assert abs(sol.farkle_rate() - float(farkle)) < 1e-15
  mean = sum(float(p) * max(pts for _, pts in s) for s, p in sets.items())
  assert abs(sol.points_per_turn() - mean) < 1e-9


def test_policy_evaluation_of_the_optimum_reproduces_it():
  r = RULES["facebook"]
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll)
  again = expected_score.evaluate(sol, roll, sol.bank, sol.expected)
  np.testing.assert_allclose(again.expected, sol.expected, rtol=1e-12)
  np.testing.assert_allclose(again.farkle, sol.farkle, atol=1e-12)


def test_thresholds_and_table_text():
  r = RULES["minimal"]
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll)
  reach = expected_score.reachable(roll, sol.cap + 1)
  th = expected_score.thresholds(sol, reach)
  for n, (first, again) in th.items():
    t = first // 50
    assert sol.bank[t, n - 1] and reach[t, n - 1]
    earlier = reach[:t, n - 1] & (np.arange(t) >= sol.bank_min)
    assert not (sol.bank[:t, n - 1] & earlier).any()
  text = expected_score.format_gain_table(sol, reach, 100)
  assert text.splitlines()[2].split()[1] == "-"      # (t=50, n=6)


ZILCH = rules.facebook().replace(name="zilch", n_of_a_kind="double",
                                 three_pairs=1500, straight=1500,
                                 nothing_roll=500)


def test_a_turn_that_need_not_end_gets_its_closed_form_tail():
  """Zilch's six dice never farkle, so a turn need not end: the solve stops
  anyway, rolls six dice at every total, and agrees with a doubled cap."""
  roll = roll_tables.build(ZILCH)
  assert roll.farkle_prob[5] == 0 and (roll.farkle_prob[:5] > 0).all()
  tail = expected_score.tail_gain(roll, ZILCH.step)
  assert (tail[:5] == 0).all() and 0 < tail[5] < 1500
  # The fixed point of its equation, checked row by row in plain Python.
  again = 0.0
  for r in range(len(roll.set_dice)):
    if roll.set_dice[r] == 6:
      again += roll.set_prob[r] * max(
          p * ZILCH.step + tail[n - 1]
          for p, n in zip(roll.opt_pts[r], roll.opt_next[r]))
  assert again == pytest.approx(tail[5], rel=1e-14)
  sol = expected_score.solve(ZILCH, roll)
  assert not sol.bank[:, 5].any()          # six dice: always roll
  np.testing.assert_allclose(sol.gain[-1], tail, rtol=1e-12)
  big = expected_score.solve(ZILCH, roll, cap=2 * sol.cap * sol.unit)
  np.testing.assert_allclose(big.expected[:sol.cap + 1], sol.expected,
                             rtol=0, atol=1e-9)
  np.testing.assert_array_equal(big.bank[:sol.cap // 2],
                                sol.bank[:sol.cap // 2])


def test_rules_whose_rolls_all_can_farkle_have_no_tail():
  roll = roll_tables.build(rules.facebook())
  assert (expected_score.tail_gain(roll, 50) == 0).all()
