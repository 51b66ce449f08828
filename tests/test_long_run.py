"""Maximum long-run average score with a farkle penalty: the optimality
equations checked with the independent one-turn recursion of
tests/reference.py, and Monte Carlo play of the per-count turns."""

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.strategy import expected_score, long_run


@pytest.fixture(scope="module")
def facebook():
  rules = rules_lib.facebook()
  return rules, long_run.solve(rules)


def test_without_a_penalty_it_is_the_one_turn_maximum():
  rules = rules_lib.minimal()
  lr = long_run.solve(rules)
  one = expected_score.solve(rules)
  assert lr.average == one.points_per_turn() and lr.relative.tolist() == [0]


def test_average_and_relative_values_solve_the_optimality_equations(
    facebook):
  rules, lr = facebook
  h = lr.relative
  for f in range(3):
    # c(f) = r(f) + h(f + 1) - h(0): the last count pays the penalty.
    c = (-500.0 if f == 2 else 0.0) + h[(f + 1) % 3] - h[0]
    assert lr.farkle_points[f] == pytest.approx(c, abs=1e-9)
    best = reference.expected_turn("facebook", farkle_value=c)[(6, 0)]
    assert best == pytest.approx(lr.average + h[f], rel=1e-12), f


def test_it_beats_the_turn_that_ignores_the_penalty(facebook):
  rules, lr = facebook
  one = expected_score.solve(rules)
  q = np.full(3, one.farkle_rate())
  g_one, _ = long_run.evaluate(rules, np.full(3, one.points_per_turn()), q)
  assert lr.average > g_one
  assert one.points_per_turn() - 500 * q[0] ** 3 / (1 + q[0] + q[0] ** 2) \
      == pytest.approx(g_one, rel=1e-12)


def _simulate(rules, lr, chains=4000, turns=150, burn=20, seed=0):
  """Mean points per turn of the per-count turns: `chains` independent
  sequences of turns, each counted after `burn` turns; (mean, its SE)."""
  roll = roll_tables.build(rules)
  rng = np.random.default_rng(seed)
  unit = lr.turns[0].unit
  cap = min(t.cap for t in lr.turns)
  value = np.stack([t.expected[:cap + 1] for t in lr.turns])     # [K, T, 6]
  bank = np.stack([t.bank[:cap + 1] for t in lr.turns])
  rows_of = [np.nonzero(roll.set_dice == n)[0] for n in range(1, 7)]
  f = np.zeros(chains, int)
  total = np.zeros(chains)
  for turn in range(turns):
    t, n = np.zeros(chains, int), np.full(chains, 6)
    live = np.ones(chains, bool)
    banked = np.zeros(chains)
    while live.any():
      for i in np.nonzero(live)[0]:
        sets = rows_of[n[i] - 1]
        p = np.concatenate([[roll.farkle_prob[n[i] - 1]], roll.set_prob[sets]])
        r = rng.choice(len(p), p=p / p.sum())
        if r == 0:                                   # farkle
          live[i] = False
          banked[i] = -500.0 if f[i] == 2 else 0.0
          f[i] = (f[i] + 1) % 3
          continue
        row = sets[r - 1]
        at = np.minimum(t[i] + roll.opt_pts[row], cap)
        j = np.argmax(value[f[i], at, roll.opt_next[row] - 1])
        t[i], n[i] = at[j], roll.opt_next[row, j]
        if (t[i] >= cap or bank[f[i], t[i], n[i] - 1]) and (
            t[i] * unit >= rules.bank_minimum):
          live[i] = False
          banked[i] = t[i] * unit
          f[i] = 0
    if turn >= burn:
      total += banked
  per_chain = total / (turns - burn)
  return per_chain.mean(), per_chain.std(ddof=1) / np.sqrt(chains)


def test_monte_carlo_play_agrees(facebook):
  rules, lr = facebook
  mean, se = _simulate(rules, lr, chains=1000, turns=110, burn=10)
  assert se < 2.5
  assert abs(mean - lr.average) < 3 * se, (mean, se, lr.average)
