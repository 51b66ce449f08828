"""The final round: the chaser's last turn against enumeration, every solve
method against the independent reference, and the cap."""

import numpy as np
import pytest

import reference
from farkle_jax.game import final_round, roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from test_ordered import _solve


def _rules(**changes):
  return rules_lib.minimal(goal=1000).replace(final_round=True,
                                              final_round_cap=500, **changes)


@pytest.mark.parametrize("name, rules", [
    ("minimal", rules_lib.minimal()), ("facebook", rules_lib.facebook())])
def test_last_turn_chances_match_enumeration(name, rules):
  table = final_round.reach_table(roll_tables.build(rules), 16)
  for m in range(17):
    for n in range(1, 7):
      want = reference.reach(name, 50 * m, n)
      assert table[m, n - 1] == pytest.approx(want, abs=1e-14), (m, n)


def test_one_roll_targets_by_hand():
  table = final_round.reach_table(roll_tables.build(rules_lib.minimal()), 2)
  # One die: only a 1 (100) or a 5 (50) scores; with 50 needed either does,
  # and after it six fresh dice are not needed.
  assert table[1, 0] == pytest.approx(2 / 6)
  # 100 needed with one die: a 1 at once, or a 5 then at least 50 more from
  # six dice (any score: 1 - P(farkle with six dice)).
  six = 1 - float(reference.distribution("minimal", 6)[0])
  assert table[2, 0] == pytest.approx(1 / 6 + 1 / 6 * six)


@pytest.mark.parametrize("method", ["ordered", "value_iteration",
                                    "wavefront"])
@pytest.mark.parametrize("entry", [0, 500])
def test_every_method_agrees_with_the_reference(method, entry):
  ref, _ = reference.solve("minimal", 1000, 0, final_round=True, cap=500,
                           entry=entry)
  got, _ = _solve(method, _rules(entry_minimum=entry))
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_with_a_penalty_the_ordered_method_agrees():
  rules = rules_lib.facebook(floor=-300, goal=600).replace(
      final_round=True, final_round_cap=300)
  ref, _ = reference.solve("facebook", 600, -300, final_round=True, cap=300)
  got, _ = _solve("ordered", rules)
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_the_rule_favours_the_second_player():
  plain, _ = _solve("ordered", rules_lib.minimal(goal=1000))
  final, _ = _solve("ordered", _rules())
  assert final[0, 0, 0, 0] < plain[0, 0, 0, 0] - 0.01


def test_values_settle_as_the_cap_rises():
  # Goal 1000: a leader may roll far past it when the chaser is close.
  first = [_solve("ordered", _rules().replace(final_round_cap=cap))[0]
           for cap in (500, 1000, 2000, 3000)]
  steps = [np.abs(a - b).max() for a, b in zip(first, first[1:])]
  assert steps[0] > steps[1] > steps[2] and steps[2] < 1e-4


def test_the_padding_holds_the_chasers_chances():
  lay = StateLayout(_rules())
  pad = lay.past_goal_values()
  d0 = lay.index_of(0)
  # A chaser with 0 facing a bar of 1000 needs 1050 in one turn.
  want = reference.reach("minimal", 1050)
  assert pad[d0, 0] == pytest.approx(want, abs=1e-14)
  assert (pad[:, lay.past_goal:] == 0).all()   # past the cap: a win


def _play_games(rules, w0, games, seed):
  """First-player wins of optimal play, the last turn included (plain
  Python over the solver's turn values)."""
  from farkle_jax.solver import bellman
  layout, roll = StateLayout(rules), roll_tables.build(rules)
  keys = np.arange(layout.num_keys)
  values = bellman.turn_values(w0, keys, layout, roll)       # [T + 1, 6, K]
  banks = layout.bank_values(layout.padded_start(w0), layout.key_fields(),
                             layout.num_rows + 1)           # [K, T + 1]
  last = final_round.reach_table(roll, 400)
  rng = np.random.default_rng(seed)
  cdf = {n: np.cumsum(np.concatenate([[roll.farkle_prob[n - 1]],
                                      roll.set_prob[roll.set_dice == n]]))
         for n in range(1, 7)}
  rows = {n: np.nonzero(roll.set_dice == n)[0] for n in range(1, 7)}

  def outcome(n):
    r = int(np.searchsorted(cdf[n], rng.random() * cdf[n][-1], "right"))
    return None if r == 0 else rows[n][min(r, len(rows[n])) - 1]

  def chaser(need):
    n = 6
    while need > 0:
      r = outcome(n)
      if r is None:
        return False
      j = np.argmax(last[np.maximum(need - roll.opt_pts[r], 0),
                         roll.opt_next[r] - 1])
      need, n = need - roll.opt_pts[r, j], roll.opt_next[r, j]
    return True

  wins = 0
  for _ in range(games):
    score, mover = [0, 0], 0
    while True:
      b, d = score[mover], score[1 - mover]
      key = layout.key_index(b, d, 0, 0)
      t, n, top = 0, 6, int(layout.t_max(b))
      while True:
        r = outcome(n)
        if r is None:
          break
        at = t + roll.opt_pts[r]
        v = np.where(at > top, 1.0,
                     values[np.minimum(at, layout.num_rows), roll.opt_next[r] - 1,
                            key])
        j = int(np.argmax(v))
        t, n = int(at[j]), int(roll.opt_next[r, j])
        if t > top:
          break                                  # past the cap: a win
        if t >= layout.bank_floor(b) and banks[key, t] >= values[t, n - 1, key]:
          break
      if r is None:
        mover = 1 - mover
        continue
      if t > top or b + t >= layout.num_scores:  # reached the goal
        bar = b + t
        need = max(bar - d + 1, int(layout.bank_floor(d)))
        lost = t <= top and chaser(need)
        wins += (mover == 0) != lost
        break
      score[mover] = b + t
      mover = 1 - mover
  return wins


def test_monte_carlo_play_agrees():
  rules = _rules()
  w0, _ = _solve("ordered", rules)
  games = 30_000
  rate = _play_games(rules, w0, games, seed=1) / games
  p = w0[0, 0, 0, 0]
  se = np.sqrt(p * (1 - p) / games)
  assert abs(rate - p) < 3 * se, (rate, p, se)
  # ... and the games tell the rule apart: without the last turn the first
  # player would win more often than the play shows.
  plain, _ = _solve("ordered", rules_lib.minimal(goal=1000))
  assert plain[0, 0, 0, 0] - rate > 3 * se


def test_memory_estimate_grows_with_the_cap_and_refuses():
  from farkle_jax.solver import memory
  small = StateLayout(_rules().replace(final_round_cap=500))
  large = StateLayout(_rules().replace(final_round_cap=8000))
  assert large.num_rows > small.num_rows
  for method in ("ordered", "value_iteration", "wavefront"):
    a = memory.footprint(small, method, "float64")
    b = memory.footprint(large, method, "float64")
    assert b.host > a.host or b.device > a.device, method
  with pytest.raises(memory.MemoryRefused, match="GB"):
    memory.check_solve(large, "value_iteration", "float64", 1e-6, None)


def test_strategy_evaluation_refuses_it_in_one_line():
  import os
  import subprocess
  import sys
  from conftest import ROOT
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.analyze", "evaluate", "--config",
       "configs/tiny.py:minimal", "--config.rules.final_round=True",
       "--strategy", "maxscore", "--versus", "bank:300"], cwd=ROOT,
      capture_output=True, text=True, env=dict(os.environ))
  errors = [l for l in out.stderr.splitlines() if l.startswith("error: ")]
  assert out.returncode == 2 and len(errors) == 1, out.stderr
  assert "final_round" in errors[0] and "Traceback" not in out.stderr


def test_shared_ties_against_the_reference():
  rules = _rules(final_round_ties="shared")
  table = final_round.reach_table(roll_tables.build(rules), 12, tie=True)
  for m in range(1, 13):
    assert table[m, 5] == pytest.approx(
        reference.reach("minimal", 50 * m, 6, True), abs=1e-14)
  assert table[1].min() >= 0.5
  # Rounding keeps this iteration's change near 1e-15 once converged.
  ref, _ = reference.solve("minimal", 1000, 0, final_round=True, cap=500,
                           ties="shared", tol=1e-14)
  for method in ("ordered", "wavefront"):
    got, _ = _solve(method, rules)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
  leader, _ = _solve("ordered", _rules())
  assert got[0, 0, 0, 0] < leader[0, 0, 0, 0]   # ties help the chaser
