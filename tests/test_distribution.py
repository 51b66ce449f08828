"""Exact turn distributions (strategy/distribution.py) against a brute-force
enumeration and a simulation that share no code with the package, against
expected_score's means, and the `distribution` command line."""

import functools
import itertools
import json
import math
import random
from collections import Counter

import numpy as np
import pytest

import farkle_jax  # noqa: F401  (64-bit mode)
import reference
from configs import tiny
from conftest import COMMANDS
from test_plots import is_png
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.solver import queries
from farkle_jax.strategy import distribution, expected_score

# The minimal rules written out again: singles 1 = 100 and 5 = 50, a
# triple of face f = 100 f (1s: 1000), nothing more for a fourth die.
TRIPLE = {1: 1000, 2: 200, 3: 300, 4: 400, 5: 500, 6: 600}
SINGLE = {1: 100, 5: 50}
BANK_AT = 300


def _options(dice):
  """{(points, dice used)} of every scoring a roll allows."""
  counts = Counter(dice)
  per_face = []
  for f in range(1, 7):
    c, ways = counts[f], []
    for k in range(c // 3 + 1):
      for s in range(c - 3 * k + 1 if f in SINGLE else 1):
        ways.append((k * TRIPLE[f] + s * SINGLE.get(f, 0), 3 * k + s))
    per_face.append(ways)
  return {(sum(p for p, _ in w), sum(u for _, u in w))
          for w in itertools.product(*per_face) if sum(u for _, u in w)}


@functools.lru_cache(None)
def _rolls(n):
  """[(sorted dice, probability)] of n dice."""
  got = Counter(tuple(sorted(r))
                for r in itertools.product(range(1, 7), repeat=n))
  return [(r, c / 6**n) for r, c in got.items()]


@functools.lru_cache(None)
def _options_of(dice):
  return _options(dice)


@functools.lru_cache(None)
def _mean(t, n):
  """Mean points of bank at BANK_AT from (t, n), best scorings."""
  if t >= BANK_AT:
    return float(t)
  return sum(p * max((_mean(t + pts, 6 if k == n else n - k)
                      for pts, k in _options_of(r)), default=0.0)
             for r, p in _rolls(n))


def _choose(t, n, dice):
  """(t', n') of the scoring of highest mean."""
  return max(((t + pts, 6 if k == n else n - k)
              for pts, k in _options_of(dice)), key=lambda s: _mean(*s))


@functools.lru_cache(None)
def _brute(t, n):
  """{points or 'farkle': probability} of the rest of the turn."""
  if t >= BANK_AT:
    return {t: 1.0}
  out = Counter()
  for r, p in _rolls(n):
    if not _options_of(r):
      out["farkle"] += p
      continue
    for k, q in _brute(*_choose(t, n, r)).items():
      out[k] += p * q
  return dict(out)


def _exact(name, rules):
  roll = roll_tables.build(rules)
  pol = distribution.policy(name, rules, roll)
  return pol, distribution.turn(pol, roll), roll


def test_one_turn_equals_a_brute_force_enumeration():
  _, dist, _ = _exact(f"bank:{BANK_AT}", rules_lib.minimal())
  want = _brute(0, 6)
  assert dist.farkle == pytest.approx(want.pop("farkle"), abs=1e-12)
  got = {int(t) * dist.unit: p for t, p in enumerate(dist.banked) if p}
  assert set(got) == set(want)
  for points, p in want.items():
    assert got[points] == pytest.approx(p, abs=1e-12), points
  assert dist.mean() == pytest.approx(_mean(0, 6), abs=1e-9)


@pytest.mark.parametrize("preset, name", [
    ("minimal", "maxscore"), ("minimal", "bank:300"),
    ("facebook", "bank:300"), ("facebook", "maxscore"),
    ("facebook", "bank:1000")])
def test_mean_is_expected_scores_and_the_mass_is_one(preset, name):
  rules = rules_lib.PRESETS[preset]()
  pol, dist, roll = _exact(name, rules)
  ev = expected_score.evaluate(pol.sol, roll, pol.bank, pol.prefer)
  assert abs(dist.mean() - ev.points_per_turn()) < 1e-9
  assert abs(dist.farkle - ev.farkle_rate()) < 1e-12
  assert abs(dist.banked.sum() + dist.farkle - 1) < 1e-12
  if name == "maxscore":   # the policy the package calls maxscore
    assert abs(dist.mean() - pol.sol.points_per_turn()) < 1e-9


def test_a_turn_that_need_not_end_banks_above_the_cap_rarely():
  """zilch's six dice never farkle: as expected_score, the cap ends it."""
  rules = rules_lib.facebook().replace(
      name="zilch", n_of_a_kind="double", three_pairs=1500,
      three_pairs_repeat=True, nothing_roll=500)
  pol, dist, roll = _exact("maxscore", rules)
  ev = expected_score.evaluate(pol.sol, roll, pol.bank, pol.prefer)
  assert abs(dist.mean() - ev.points_per_turn()) < 1e-9
  assert abs(dist.banked.sum() + dist.farkle - 1) < 1e-12
  assert 0 < dist.beyond_cap < 1e-9


def _game(rng, rules, target):
  """Turns of one solitaire game: real dice, bank at BANK_AT."""
  score, row, turns = 0, 0, 0
  while score < target:
    turns += 1
    t, n = 0, 6
    while t < BANK_AT:
      dice = tuple(sorted(rng.randint(1, 6) for _ in range(n)))
      if not _options_of(dice):
        t = None
        break
      t, n = _choose(t, n, dice)
    if t is not None:
      score, row = score + t, 0
      continue
    row += 1
    if rules.penalty and row == rules.penalty_count:
      score, row = max(rules.floor, score - rules.penalty), 0
  return turns


@pytest.mark.parametrize("penalty", [False, True])
def test_turns_to_a_target_match_simulated_games(penalty):
  rules = rules_lib.minimal()
  if penalty:   # two farkles in a row cost 500, down to -1000 at most
    rules = rules.replace(penalty=500, penalty_count=2, floor=-1000)
  target, games = 1000, 20_000
  _, dist, _ = _exact(f"bank:{BANK_AT}", rules)
  steps = distribution.turns(dist, rules, target)
  assert steps.penalty == penalty and steps.unreached < 1e-12
  rng = random.Random(7)
  played = np.array([_game(rng, rules, target) for _ in range(games)])
  for k, p in enumerate(steps.reached[:8], start=1):
    se = max(math.sqrt(p * (1 - p) / games), 1 / games)
    assert abs(np.mean(played <= k) - p) < 4 * se, k
  se = played.std() / math.sqrt(games)
  assert abs(played.mean() - steps.mean) < 4 * se
  assert steps.reached[-1] >= distribution.REACHED > steps.reached[-2]


def test_turns_of_a_sure_turn_are_a_count():
  """A turn that always banks one step: the target's steps, exactly."""
  dist = distribution.TurnDistribution(50, np.array([0.0, 1.0]), 0.0, 1,
                                       0.0)
  steps = distribution.turns(dist, rules_lib.minimal(), 500)
  assert steps.mean == 10 and list(steps.reached) == [0] * 9 + [1]


@pytest.mark.parametrize("name, start", [
    ("minimal", (0, 0)), ("minimal", (600, 250)), ("facebook", (0, 0)),
    ("facebook", (350, 700))])
def test_the_optimal_play_banks_as_the_plain_reference(tiny_runs, name,
                                                      start):
  """One turn under the optimal play at a position: every total's chance
  and the farkle's against a plain backward pass over the reference's own
  solution (tests/reference.py), to 1e-12."""
  rules = tiny.get_config(name).rules
  ref_w0, _ = reference.solve(name, rules.goal, rules.floor)
  w0, layout, roll, _ = tiny_runs(name)
  dist = distribution.optimal(queries.Turns(w0, layout, roll), layout,
                              *start)
  key = tuple(int(i) for i in layout.opening_key(*start))
  want = reference.turn_bust(name, rules.goal, rules.floor, ref_w0, key)
  assert not want["ties"]
  want = dict(want["points"][0, 6])
  assert abs(dist.farkle - want.pop("farkle")) < 1e-12
  got = {t * dist.unit: p for t, p in enumerate(dist.banked) if p}
  assert set(got) == set(want)
  for points, p in want.items():
    assert abs(got[points] - p) < 1e-12, points
  assert abs(dist.banked.sum() + dist.farkle - 1) < 1e-12
  left = rules.goal - start[0]   # totals from here on reach the goal
  assert dist.beyond_cap > 0 and abs(dist.beyond_cap - sum(
      p for t, p in want.items() if t >= left)) < 1e-12


def _cli(*args):
  return COMMANDS("farkle_jax.apps.analyze", "distribution", *args)


def test_cli_text_json_and_plot(tmp_path):
  out = _cli("--config", "minimal", "--strategy", "bank:300",
             "--target", "1000", "--plot", str(tmp_path / "d.png"))
  assert out.returncode == 0, out.stderr
  assert "farkle   0.19485" in out.stdout
  assert "turns alone from 0 to 1000, no farkle penalty" in out.stdout
  assert is_png(tmp_path / "d.png")
  out = _cli("--config", "facebook", "--strategy", "bank:300", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["penalty_applied"] and got["target"] == 10000
  assert abs(sum(p["p"] for p in got["points"]) + got["farkle"] - 1) < 1e-12
  assert got["reached_by_turn"][-1] >= 0.999


def test_cli_optimal_at_a_position(tiny_runs, tmp_path):
  workdir = tiny_runs("minimal")[3]
  out = _cli("--config", "tiny:minimal", "--workdir", workdir,
             "--strategy", "optimal", "--start", "600,250", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["strategy"] == "optimal at 600,250"
  assert got["mean_turns"] is None and 0 < got["beyond_cap"] < 1
  assert abs(sum(p["p"] for p in got["points"]) + got["farkle"] - 1) < 1e-12
  out = _cli("--config", "tiny:minimal", "--workdir", workdir,
             "--strategy", "optimal", "--plot", str(tmp_path / "o.png"))
  assert out.returncode == 0, out.stderr
  assert "P(reaches the goal)" in out.stdout and is_png(tmp_path / "o.png")
  assert "for a fixed policy only" in out.stdout


@pytest.mark.parametrize("args, message", [
    (("--strategy", "nobody"), "'nobody' is not allowed"),
    (("--strategy", "optimal"), "the optimal strategy needs --workdir"),
    (("--strategy", "optimal", "--target", "500"), "for a fixed policy"),
    (("--strategy", "optimal", "--config.rules.final_round=True"),
     "final_round = True is not given"),
    (("--strategy", "bank:75"), "bank:75"),
    (("--target", "75"), "--target=75"),
    (("--target", "0"), "--target=0"),
    (("--plot", "d.xyz"), "not a format matplotlib writes"),
])
def test_cli_refuses_bad_input_in_one_line(args, message):
  out = _cli("--config", "minimal", *args)
  assert out.returncode == 2, out.stderr
  lines = out.stderr.strip().splitlines()
  assert len(lines) == 1 and message in lines[0], lines
