"""Monte Carlo play against the exact evaluator (seeded, so repeatable)."""

import pytest

from farkle_jax.strategy import evaluation, expected_score, policies
from farkle_jax.strategy import simulation

GAMES = 200_000


@pytest.mark.parametrize("name", ["minimal", "facebook"])
def test_simulation_agrees_with_exact_evaluation(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs(name)
  sol = expected_score.solve(layout.rules, roll)
  pairs = [(policies.optimal(w0, layout, roll),) * 2,
           (policies.max_score(layout, sol),
            policies.bank_at(layout, roll, 400))]
  for seed, (a, b) in enumerate(pairs):
    exact = evaluation.evaluate(a, b, layout, roll)
    sim = simulation.simulate(a, b, layout, roll, GAMES, seed=seed)
    assert abs(sim.first - exact.first) < 3 * sim.first_se, (a.name, b.name)
    assert abs(sim.second - exact.second) < 3 * sim.second_se
  i = layout.index_of(0)
  # The optimal pair: the simulated first-player rate is the solver's W0.
  sim = simulation.simulate(pairs[0][0], pairs[0][1], layout, roll, GAMES,
                            seed=7)
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
  sim = simulation.simulate(a, b, layout, roll, GAMES, seed=11,
                            start=(0, 300))
  assert abs(sim.first - exact.first) < 3 * sim.first_se
  assert abs(sim.second - exact.second) < 3 * sim.second_se
  # A komi matters: the first player's chances differ from an even start.
  even = evaluation.evaluate(a, b, layout, roll)
  assert exact.first < even.first - 0.05
