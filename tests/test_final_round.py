"""The final round: the chaser's last turn against enumeration, every solve
method against the independent reference, and the cap."""

import functools

import numpy as np
import pytest

import reference
from farkle_jax.game import final_round, roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from test_long_run import _sampler
from test_ordered import _solve


@functools.lru_cache(maxsize=None)
def _ordered(rules):
  """W0 of `rules` by the ordered method (read-only), solved once for the
  tests here that read it: several ask for the same game."""
  w0 = np.array(_solve("ordered", rules)[0])
  w0.setflags(write=False)
  return w0


def _method(method, rules):
  """W0 of `rules` by `method`, the ordered method's from `_ordered`."""
  return _ordered(rules) if method == "ordered" else _solve(method, rules)[0]


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


# Each method once here, with and without the entry minimum between them;
# the other three pairs in the thorough tier.
@pytest.mark.parametrize("method, entry", [
    ("ordered", 0), ("ordered", 500), ("value_iteration", 500),
    ("wavefront", 0),
    pytest.param("value_iteration", 0, marks=pytest.mark.thorough),
    pytest.param("wavefront", 500, marks=pytest.mark.thorough)])
def test_every_method_agrees_with_the_reference(method, entry):
  ref, _ = reference.solve("minimal", 1000, 0, final_round=True, cap=500,
                           entry=entry)
  got = _method(method, _rules(entry_minimum=entry))
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_with_a_penalty_the_ordered_method_agrees():
  rules = rules_lib.facebook(floor=-300, goal=600).replace(
      final_round=True, final_round_cap=300)
  ref, _ = reference.solve("facebook", 600, -300, final_round=True, cap=300)
  got, _ = _solve("ordered", rules)
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_the_rule_favours_the_second_player():
  plain = _ordered(rules_lib.minimal(goal=1000))
  final = _ordered(_rules())
  assert final[0, 0, 0, 0] < plain[0, 0, 0, 0] - 0.01


def test_values_settle_as_the_cap_rises():
  # Goal 1000: a leader may roll far past it when the chaser is close.
  first = [_ordered(_rules().replace(final_round_cap=cap))
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
  """First-player wins of optimal play, the last turn included: plain
  numpy over the solver's turn values, every game one roll a step."""
  from farkle_jax.solver import bellman
  layout, roll = StateLayout(rules), roll_tables.build(rules)
  keys = np.arange(layout.num_keys)
  values = bellman.turn_values(w0, keys, layout, roll)       # [T + 1, 6, K]
  banks = layout.bank_values(layout.padded_start(w0), layout.key_fields(),
                             layout.num_rows + 1)           # [K, T + 1]
  tables = (layout, roll, values, banks, final_round.reach_table(roll, 400))
  draw = _sampler(roll, np.random.default_rng(seed))
  # Per game: banked scores, the mover, the turn total and dice; need > 0
  # once the mover reached the goal: the chaser's last turn must make it.
  g = dict(score=np.zeros((games, 2), int), mover=np.zeros(games, int),
           t=np.zeros(games, int), n=np.full(games, 6),
           need=np.zeros(games, int), lost=np.zeros(games, bool))
  live = np.arange(games)
  wins = 0
  while live.size:
    chase = g["need"][live] > 0
    over = np.concatenate([_leader_rolls(g, live[~chase], draw, tables),
                           _chaser_rolls(g, live[chase], draw, tables)])
    wins += int(((g["mover"][over] == 0) != g["lost"][over]).sum())
    live = np.setdiff1d(live, over)
  return wins


def _leader_rolls(g, i, draw, tables):
  """One roll of the games `i` in a turn of their own; returns those
  over without a roll of the chaser (the mover past the cap, or a chaser
  who needs nothing)."""
  layout, roll, values, banks, _ = tables
  mover = g["mover"][i]
  b, d = g["score"][i, mover], g["score"][i, 1 - mover]
  key, top = layout.key_index(b, d, 0, 0), layout.t_max(b)
  row = draw(g["n"][i])
  bust = row < 0                                 # the other player's turn
  _next_turn(g, i[bust])
  i, row, b, d, key, top = (x[~bust] for x in (i, row, b, d, key, top))
  at = g["t"][i, None] + roll.opt_pts[row]                       # [L, J]
  nxt = roll.opt_next[row]
  v = np.where(at > top[:, None], 1.0,
               values[np.minimum(at, layout.num_rows), nxt - 1, key[:, None]])
  j = np.argmax(v, axis=1)
  t, n = at[np.arange(len(i)), j], nxt[np.arange(len(i)), j]
  g["t"][i], g["n"][i] = t, n
  past = t > top                                 # past the cap: a win
  row_t = np.minimum(t, layout.num_rows)
  banked = ~past & (t >= layout.bank_floor(b)) & (
      banks[key, row_t] >= values[row_t, n - 1, key])
  goal = banked & (b + t >= layout.num_scores)   # reached the goal
  need = np.maximum(b + t - d + 1, layout.bank_floor(d))
  g["need"][i[goal]], g["n"][i[goal]] = need[goal], 6
  g["lost"][i[goal]] = need[goal] <= 0           # the chaser needs nothing
  stays = banked & ~goal
  g["score"][i[stays], g["mover"][i[stays]]] = (b + t)[stays]
  _next_turn(g, i[stays])
  return np.concatenate([i[past], i[goal & (need <= 0)]])


def _next_turn(g, i):
  g["mover"][i] = 1 - g["mover"][i]
  g["t"][i], g["n"][i] = 0, 6


def _chaser_rolls(g, i, draw, tables):
  """One roll of the chaser's last turn in the games `i` (the best chance
  to reach `need`); returns those over (a farkle, or `need` reached)."""
  roll, last = tables[1], tables[4]
  row = draw(g["n"][i])
  bust = i[row < 0]                              # the leader wins
  i, row = i[row >= 0], row[row >= 0]
  pts, nxt = roll.opt_pts[row], roll.opt_next[row]
  j = np.argmax(last[np.maximum(g["need"][i, None] - pts, 0), nxt - 1],
                axis=1)
  g["need"][i] -= pts[np.arange(len(i)), j]
  g["n"][i] = nxt[np.arange(len(i)), j]
  g["lost"][i] = g["need"][i] <= 0
  return np.concatenate([bust, i[g["lost"][i]]])


def test_monte_carlo_play_agrees():
  rules = _rules()
  w0 = _ordered(rules)
  # The games step together (numpy): 100,000 cost about a second. SE
  # 0.0016 (0.0028 with the 30,000 played one at a time before); the rule
  # moves the first player's chance by 0.016, now 10 SE, then 5.5.
  games = 100_000
  rate = _play_games(rules, w0, games, seed=1) / games
  p = w0[0, 0, 0, 0]
  se = np.sqrt(p * (1 - p) / games)
  assert abs(rate - p) < 3 * se, (rate, p, se)
  # ... and the games tell the rule apart: without the last turn the first
  # player would win more often than the play shows.
  plain = _ordered(rules_lib.minimal(goal=1000))
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
  leader = _ordered(_rules())
  assert got[0, 0, 0, 0] < leader[0, 0, 0, 0]   # ties help the chaser
