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


def _sampler(roll, rng):
  """draw(n) -> the score-set row rolled by each chain with n[i] dice (-1:
  a farkle), all chains at once: cumulative probabilities per n, padded
  with inf so that no padding is ever drawn."""
  rows = [np.nonzero(roll.set_dice == n)[0] for n in range(1, 7)]
  width = max(map(len, rows)) + 1
  cdf = np.full((6, width), np.inf)
  ids = np.full((6, width), -1)
  for n, r in enumerate(rows, 1):
    p = np.concatenate([[roll.farkle_prob[n - 1]], roll.set_prob[r]])
    cdf[n - 1, :len(p)] = np.cumsum(p)
    ids[n - 1, 1:len(p)] = r
  size = np.array([len(r) for r in rows])   # the last outcome's index

  def draw(n):
    c = cdf[n - 1]
    u = rng.random(len(n)) * c[np.arange(len(n)), size[n - 1]]
    k = np.minimum((u[:, None] >= c).sum(axis=1), size[n - 1])
    return ids[n - 1, k]

  return draw


def _turns(rules, roll, draw, f, tables):
  """One turn of every chain, each playing the per-count turn of its
  farkle count f: (points banked [C], the counts after the turn)."""
  value, bank, cap, unit = tables
  t, n = np.zeros(len(f), int), np.full(len(f), 6)
  banked, after = np.zeros(len(f)), f.copy()
  live = np.arange(len(f))
  while live.size:
    row = draw(n[live])
    out = live[row < 0]                                # farkle
    banked[out] = np.where(f[out] == 2, -500.0, 0.0)
    after[out] = (f[out] + 1) % 3
    live, row = live[row >= 0], row[row >= 0]
    at = np.minimum(t[live, None] + roll.opt_pts[row], cap)      # [L, J]
    nxt = roll.opt_next[row]
    j = np.argmax(value[f[live, None], at, nxt - 1], axis=1)
    i = np.arange(len(live))
    t[live], n[live] = at[i, j], nxt[i, j]
    tl, nl = t[live], n[live]
    stop = ((tl >= cap) | bank[f[live], tl, nl - 1]) & (
        tl * unit >= rules.bank_minimum)
    banked[live[stop]] = tl[stop] * unit
    after[live[stop]] = 0
    live = live[~stop]
  return banked, after


def _simulate(rules, lr, chains=4000, turns=150, burn=20, seed=0):
  """Mean points per turn of the per-count turns: `chains` independent
  sequences of turns (stepped together), each counted after `burn` turns;
  (mean, its SE)."""
  roll = roll_tables.build(rules)
  draw = _sampler(roll, np.random.default_rng(seed))
  unit = lr.turns[0].unit
  cap = min(t.cap for t in lr.turns)
  value = np.stack([t.expected[:cap + 1] for t in lr.turns])     # [K, T, 6]
  bank = np.stack([t.bank[:cap + 1] for t in lr.turns])
  f = np.zeros(chains, int)
  total = np.zeros(chains)
  for turn in range(turns):
    banked, f = _turns(rules, roll, draw, f, (value, bank, cap, unit))
    if turn >= burn:
      total += banked
  per_chain = total / (turns - burn)
  return per_chain.mean(), per_chain.std(ddof=1) / np.sqrt(chains)


def test_monte_carlo_play_agrees(facebook):
  rules, lr = facebook
  # Chains step together (numpy), so 4,000 chains of 130 counted turns
  # cost under a second: SE 0.7 points a turn (1.6 with the 1,000 chains
  # of 100 turns played one at a time before).
  mean, se = _simulate(rules, lr)
  assert se < 1.0
  assert abs(mean - lr.average) < 3 * se, (mean, se, lr.average)
