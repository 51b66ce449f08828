"""Monte Carlo play against the exact evaluator (seeded, so repeatable)."""

import numpy as np
import pytest

from farkle_jax.strategy import evaluation, expected_score, policies
from farkle_jax.strategy import simulation

GAMES = 200_000


def _per_key(strategy, layout):
  """The dense policy of `strategy` with a row of its own for every key:
  the same policy, in the shapes of the optimal one, so that every pair of
  a game plays through one compiled program (a compile costs seconds)."""
  d = simulation.dense(strategy, layout)
  return simulation.Dense(np.arange(len(d.class_of_key), dtype=np.int32),
                          d.prefer[d.class_of_key], d.bank[d.class_of_key])


# Minimal rules in the thorough tier: Facebook's (a penalty) is the harder
# case.
@pytest.mark.parametrize("name", [
    pytest.param("minimal", marks=pytest.mark.thorough), "facebook"])
def test_simulation_agrees_with_exact_evaluation(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs(name)
  sol = expected_score.solve(layout.rules, roll)
  pairs = [(policies.optimal(w0, layout, roll),) * 2,
           (policies.max_score(layout, sol),
            policies.bank_at(layout, roll, 400))]
  i = layout.index_of(0)
  for seed, (a, b) in enumerate(pairs):
    exact = evaluation.evaluate(a, b, layout, roll)
    sim = simulation.simulate(_per_key(a, layout), _per_key(b, layout),
                              layout, roll, GAMES, seed=seed)
    assert abs(sim.first - exact.first) < 3 * sim.first_se, (a.name, b.name)
    assert abs(sim.second - exact.second) < 3 * sim.second_se
    if seed == 0:
      # The optimal pair: the simulated first-player rate is the solver's
      # W0 too (the same games: a third run of 200,000 would cost seconds
      # and check nothing more).
      assert abs(sim.first - w0[i, i, 0, 0]) < 3 * sim.first_se


def test_simulation_is_seeded(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  a = policies.bank_at(layout, roll, 300)
  one = simulation.simulate(a, a, layout, roll, 2000, seed=3)
  two = simulation.simulate(a, a, layout, roll, 2000, seed=3)
  assert one == two


def test_simulation_from_a_komi_start(tiny_runs):
  w0, layout, roll, _ = tiny_runs("facebook")
  a = policies.bank_at(layout, roll, 300)
  b = policies.max_score(layout, expected_score.solve(layout.rules, roll))
  exact = evaluation.evaluate(a, b, layout, roll, start=(0, 300))
  sim = simulation.simulate(_per_key(a, layout), _per_key(b, layout),
                            layout, roll, GAMES, seed=11, start=(0, 300))
  assert abs(sim.first - exact.first) < 3 * sim.first_se
  assert abs(sim.second - exact.second) < 3 * sim.second_se
  # A komi matters: the first player's chances differ from an even start.
  even = evaluation.evaluate(a, b, layout, roll)
  assert exact.first < even.first - 0.05
