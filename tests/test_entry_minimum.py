"""The entry minimum (getting on the board): every solve method against the
independent reference, exact evaluation and Monte Carlo play, and nothing
changed when the rule is off."""

import numpy as np
import pytest

import reference
from configs import default, tiny
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import driver, results
from farkle_jax.strategy import evaluation, expected_score, policies
from farkle_jax.strategy import simulation, solved_game
from test_final_round import _method, _ordered


def _rules(entry):
  return rules_lib.minimal(goal=1000).replace(entry_minimum=entry)


@pytest.fixture(scope="module", params=[500, 800])
def entry_game(request):
  rules = _rules(request.param)
  ref, _ = reference.solve("minimal", 1000, 0, entry=request.param)
  return rules, ref


@pytest.mark.parametrize("method", ["ordered", "value_iteration",
                                    "wavefront"])
def test_every_method_agrees_with_the_reference(entry_game, method):
  rules, ref = entry_game
  got = _method(method, rules)
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_the_rule_changes_the_game(entry_game):
  rules, ref = entry_game
  plain, _ = reference.solve("minimal", 1000, 0)
  assert np.abs(ref - plain).max() > 1e-2
  # Once both players are on the board (scores of at least the entry
  # minimum), nothing differs.
  lay = StateLayout(rules)
  on = lay.index_of(rules.entry_minimum)
  assert np.abs(ref[on:, on:] - plain[on:, on:]).max() < 1e-12


def test_exact_evaluation_and_monte_carlo(entry_game):
  rules, _ = entry_game
  layout, roll = StateLayout(rules), roll_tables.build(rules)
  w0 = _ordered(rules)
  opt = policies.optimal(w0, layout, roll)
  exact = evaluation.evaluate(opt, opt, layout, roll)
  assert exact.first == pytest.approx(w0[0, 0, 0, 0], abs=1e-12)
  maxscore = policies.max_score(layout, expected_score.solve(rules, roll))
  exact = evaluation.evaluate(maxscore, opt, layout, roll)
  sim = simulation.simulate(maxscore, opt, layout, roll, 100_000, seed=4)
  assert abs(sim.first - exact.first) < 3 * sim.first_se
  assert abs(sim.second - exact.second) < 3 * sim.second_se


def test_advice_respects_the_entry_minimum(tmp_path):
  config = tiny.get_config("minimal")
  config.rules.entry_minimum = 500
  driver.run(config, str(tmp_path))
  game = solved_game.SolvedGame.load(str(tmp_path))
  assert game.bank_minimum(0) == 500 and game.bank_minimum(500) == 50
  dec = game.decision(solved_game.Position(0, 0, t=450, n=1))
  assert dec.bank is None and dec.best == "roll"
  dec = game.decision(solved_game.Position(500, 0, t=450, n=1))
  assert dec.bank is not None


@pytest.mark.parametrize("changes, words", [
    (dict(entry_minimum=75), "multiple of step=50"),
    (dict(entry_minimum=20_000), "to goal=10000"),
])
def test_bad_entry_minimum_is_refused(changes, words):
  with pytest.raises(rules_lib.RulesError, match=words):
    rules_lib.minimal().replace(**changes)


def _with_penalty():
  """Facebook rules to 600 (floor -300) with an entry minimum of 500, and
  the reference's values at the product's keys."""
  rules = rules_lib.facebook(floor=-300, goal=600).replace(entry_minimum=500)
  lay = StateLayout(rules)
  ref = reference.solve_on_board(600, -300, 500)
  score = np.array([(int(lay.points(i)) + 300) // 50
                    for i in range(lay.num_scores)])
  on = (np.arange(lay.num_scores) >= lay.num_off).astype(int)
  f = np.arange(3)
  want = ref[score[:, None, None, None], score[None, :, None, None],
             f[None, None, :, None], f[None, None, None, :],
             on[:, None, None, None], on[None, :, None, None]]
  return rules, lay, want


@pytest.fixture(scope="module")
def penalty_game():
  return _with_penalty()


@pytest.mark.parametrize("method", ["ordered", "value_iteration",
                                    "wavefront"])
def test_with_a_penalty_every_method_agrees_with_the_reference(
    penalty_game, method):
  rules, lay, want = penalty_game
  # Off the board a player can only have 0 or what penalties left of it.
  assert [int(lay.points(i)) for i in range(lay.num_off)] == [-300, 0]
  got = _method(method, rules)
  np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_with_a_penalty_the_newton_step_agrees(penalty_game):
  from test_ordered import settings
  from farkle_jax.solver import methods
  rules, lay, want = penalty_game
  chunk = methods.compile_chunk(
      methods.build(lay, roll_tables.build(rules),
                    settings(method="ordered", tol=1e-15, newton=True)),
      settings(tol=1e-15))
  out = chunk.run(chunk.method.init(), float("inf"), 200)
  got = chunk.method.start_values(out.state)
  np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_with_a_penalty_play_agrees_with_exact_values(penalty_game):
  rules, layout, _ = penalty_game
  roll = roll_tables.build(rules)
  w0 = _ordered(rules)
  opt = policies.optimal(w0, layout, roll)
  exact = evaluation.evaluate(opt, opt, layout, roll)
  assert exact.first == pytest.approx(w0[layout.opening_key()], abs=1e-12)
  sim = simulation.simulate(opt, opt, layout, roll, 100_000, seed=2)
  assert abs(sim.first - exact.first) < 3 * sim.first_se


def test_off_leaves_the_fingerprint_as_it_was():
  assert "entry_minimum" not in rules_lib.facebook().to_dict()
  assert _rules(500).to_dict()["entry_minimum"] == 500


@pytest.mark.thorough
def test_off_leaves_the_values_as_they_were(tmp_path):
  # The shipped default values were solved before the rule existed: the
  # same config solves to the same bits (CPU backend).
  driver.run(default.get_config(), str(tmp_path))
  now = results.load(str(tmp_path)).w0
  shipped = solved_game.SolvedGame.shipped("default").run.w0
  assert np.array_equal(now, shipped)


def test_with_a_penalty_positions_say_who_is_on_the_board(tmp_path,
                                                          penalty_game):
  rules, lay, want = penalty_game
  config = tiny.get_config("facebook")
  config.rules.update(goal=600, floor=-300, entry_minimum=500)
  driver.run(config, str(tmp_path))
  game = solved_game.SolvedGame.load(str(tmp_path))
  Position = solved_game.Position
  assert game.win_probability(Position(0, 0)) == pytest.approx(
      want[lay.opening_key()], abs=1e-9)
  assert game.bank_minimum(0) == 500 and game.bank_minimum(0, True) == 300
  assert game.bank_minimum(-300) == 300
  assert game.bank_minimum(-300, False) == 500
  # 0 points after three farkles differs from 0 points not yet banked.
  off = game.win_probability(Position(100, 0))
  on = game.win_probability(Position(100, 0, d_on=True))
  assert abs(off - on) > 1e-4
  with pytest.raises(solved_game.PositionError, match="off the board"):
    game.win_probability(Position(100, 0, b_on=False))
