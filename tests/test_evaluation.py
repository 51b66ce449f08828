"""Exact strategy evaluation against the plain reference on tiny games."""

import numpy as np
import pytest

import reference
from farkle_jax.solver import memory
from farkle_jax.strategy import evaluation, expected_score, go_for_it
from farkle_jax.strategy import policies

GOAL = 1000


def _ref_policy(name, bank_at=None):
  values = reference.expected_turn(name, bank_at=bank_at)
  prefer = lambda n, t: values[(n, t)]
  if bank_at is None:
    return prefer, lambda n, t: values[(n, t)] == t
  return prefer, lambda n, t: t >= bank_at


@pytest.mark.parametrize("name", ["minimal", "facebook"])
def test_threshold_and_maxscore_match_reference(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs(name)
  sol = expected_score.solve(layout.rules, roll, cap=40_000)
  a = policies.bank_at(layout, roll, 300)
  b = policies.max_score(layout, sol)
  res = evaluation.evaluate(a, b, layout, roll)
  floor = layout.rules.low
  ref_a, ref_b = reference.evaluate(name, GOAL, floor, _ref_policy(name, 300),
                                    _ref_policy(name))
  np.testing.assert_allclose(res.a_to_move, ref_a, rtol=0, atol=1e-12)
  np.testing.assert_allclose(res.b_to_move, ref_b, rtol=0, atol=1e-12)
  i = layout.index_of(0)
  assert res.first == pytest.approx(ref_a[i, i, 0, 0], abs=1e-12)
  assert res.second == pytest.approx(1 - ref_b[i, i, 0, 0], abs=1e-12)


@pytest.mark.parametrize("name", ["minimal", "facebook"])
def test_optimal_against_itself_is_the_solver_value(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs(name)
  opt = policies.optimal(w0, layout, roll)
  res = evaluation.evaluate(opt, opt, layout, roll)
  np.testing.assert_allclose(res.a_to_move, w0, rtol=0, atol=1e-12)
  np.testing.assert_allclose(res.b_to_move, w0, rtol=0, atol=1e-12)


def test_a_penalty_at_every_farkle():
  """penalty_count 1 (one farkle count, every farkle costs): every solve
  method against the plain reference, and optimal play against itself
  evaluated back to those values."""
  from test_ordered import _solve
  from farkle_jax.game import roll_tables
  from farkle_jax.game import rules as rules_lib
  from farkle_jax.game.layout import StateLayout
  rules = rules_lib.facebook(goal=600, floor=-300).replace(penalty_count=1)
  ref, _ = reference.solve("facebook", 600, -300, penalty_count=1)
  for method in ("wavefront", "value_iteration", "ordered"):
    w0, _ = _solve(method, rules)
    np.testing.assert_allclose(w0, ref, rtol=0, atol=1e-12, err_msg=method)
  layout, roll = StateLayout(rules), roll_tables.build(rules)
  opt = policies.optimal(np.asarray(w0), layout, roll)
  res = evaluation.evaluate(opt, opt, layout, roll)
  np.testing.assert_allclose(res.a_to_move, w0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["minimal", "facebook"])
def test_optimal_gains_against_weaker_play(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs(name)
  opt = policies.optimal(w0, layout, roll)
  weak = policies.bank_at(layout, roll, 300)
  res = evaluation.evaluate(opt, weak, layout, roll)
  i = layout.index_of(0)
  assert res.first > w0[i, i, 0, 0] + 1e-3
  assert res.second > 1 - w0[i, i, 0, 0] + 1e-3
  assert (res.a_to_move >= w0 - 1e-12).all()


def test_level_solve_equals_iteration(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  sol = expected_score.solve(layout.rules, roll)
  a = go_for_it.go_for_it(layout, sol, (700,) * 6, (600,) * 6)
  b = policies.optimal(w0, layout, roll)
  oa = evaluation.turn_outcomes(a, layout, roll)
  ob = evaluation.turn_outcomes(b, layout, roll)
  exact = evaluation.evaluate_outcomes(oa, a.class_of_key, ob,
                                       b.class_of_key, layout)
  it_a, it_b = evaluation._iterate(oa, a.class_of_key, ob, b.class_of_key,
                                   layout, 1e-15, 10_000)
  np.testing.assert_allclose(exact.a_to_move, it_a, atol=1e-13)
  np.testing.assert_allclose(exact.b_to_move, it_b, atol=1e-13)


def test_turn_outcomes_sum_to_one(tiny_runs):
  w0, layout, roll, _ = tiny_runs("facebook")
  opt = policies.optimal(w0, layout, roll)
  out = evaluation.turn_outcomes(opt, layout, roll)
  total = out.bank.sum(1) + out.win + out.farkle
  np.testing.assert_allclose(total, 1.0, atol=1e-12)


def test_refuses_outcomes_that_do_not_fit(tiny_runs, monkeypatch):
  w0, layout, roll, _ = tiny_runs("minimal")
  asked = []

  def available(on_device):
    asked.append(on_device)
    return 10_000, "available host memory"

  monkeypatch.setattr(memory, "available_bytes", available)
  with pytest.raises(memory.MemoryRefused, match="rules.floor"):
    evaluation.turn_outcomes(policies.bank_at(layout, roll, 300), layout,
                             roll)
  assert asked == [False]  # host arrays: compared with host memory
