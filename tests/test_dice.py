"""Weighted dice, six alike (rules.dice): exact roll probabilities against
the enumeration of ordered rolls, solves against the plain reference, Monte
Carlo play with the weighted faces, and fair dice left as they were."""

import importlib
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from starlette.testclient import TestClient

import reference
from conftest import ROOT, solved_once
from farkle_jax.apps import explorer
from farkle_jax.game import dice as dice_lib
from farkle_jax.game import roll_tables, scoring
from farkle_jax.game import rules as rules_lib
from farkle_jax.solver import configuration, results
from farkle_jax.strategy import catalog, evaluation, expected_score, match
from farkle_jax.strategy import policies, seat_game, simulation
from farkle_jax.strategy import solved_game

# A die that shows 1 and 5 more often (0.26 each), written as the fractions
# the decimals are; and one that never shows 2 or 6.
LUCKY = (Fraction(13, 50), Fraction(3, 25), Fraction(3, 25), Fraction(3, 25),
         Fraction(13, 50), Fraction(3, 25))
LUCKY_DICE = (0.26, 0.12, 0.12, 0.12, 0.26, 0.12)
NO_TWO_OR_SIX = (Fraction(3, 10), Fraction(0), Fraction(1, 5), Fraction(1, 5),
                 Fraction(3, 10), Fraction(0))


def _kcd(**changes):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.update(changes)
  return config


def _kcd_rules(**changes):
  return configuration.check(_kcd(**changes))[0]


@pytest.mark.parametrize("faces", [LUCKY, NO_TWO_OR_SIX])
def test_roll_probabilities_equal_the_ordered_enumeration(faces):
  r = _kcd_rules(dice=tuple(float(x) for x in faces))
  assert r.face_chances == faces
  tables = roll_tables.build(r)
  for n in range(1, 7):
    out = scoring.outcomes(r, n)
    farkle, sets = reference.distribution("kcd", n, faces)
    assert out.farkle == farkle
    assert dict(zip(out.score_sets, out.probs)) == sets
    assert abs(tables.farkle_prob[n - 1] - float(farkle)) < 1e-15
    rows = tables.set_dice == n
    assert abs(tables.set_prob[rows].sum() + tables.farkle_prob[n - 1]
               - 1) < 1e-14
  assert (scoring.roll_probability(r, (1,) * 6) == 0) == (faces[1] == 0)


def test_fair_chances_written_out_leave_every_table_as_it_was():
  fair, written = rules_lib.minimal(), rules_lib.minimal().replace(
      dice=(1 / 6,) * 6)
  a, b = roll_tables.build(fair), roll_tables.build(written)
  for x, y in zip(a[:5], b[:5]):
    assert x.dtype == y.dtype and np.array_equal(x, y)
  assert "dice" not in fair.to_dict() and "partial_straights" not in (
      fair.to_dict())
  assert written.to_dict()["dice"] == [1 / 6] * 6


def test_the_kcd_sheet_scores_as_the_plain_scorer():
  r = _kcd_rules()
  for n in range(1, 7):
    for counts in scoring.multisets(n):
      best = reference.best_points("kcd", counts)
      mine = [p for k, p in scoring.choices(r, counts) if k == n]
      assert (max(mine) if mine else reference.NEG) == best, counts


def test_a_weighted_solve_equals_the_plain_reference(tmp_path_factory):
  config = _kcd(goal=600, dice=LUCKY_DICE)
  config.solver.tol = 1e-15
  w0 = results.load(solved_once(tmp_path_factory, "kcd_lucky", config))[0]
  ref, _ = reference.solve("kcd", 600, 0, faces=LUCKY)
  np.testing.assert_allclose(w0, ref, rtol=0, atol=1e-12)
  fair, _ = reference.solve("kcd", 600, 0)
  assert w0[0, 0, 0, 0] > fair[0, 0, 0, 0] + 0.005  # the weights matter


def test_weighted_maximum_expected_score_equals_the_plain_recursion():
  r = _kcd_rules(dice=LUCKY_DICE)
  sol = expected_score.solve(r, roll_tables.build(r), cap=40_000)
  ref = reference.expected_turn("kcd", cap=40_000, faces=LUCKY)
  for (n, t), v in ref.items():
    if t <= 15_000:   # the two caps differ above: a bank, a tail gain
      assert abs(sol.expected[t // 50, n - 1] - v) < 1e-9, (n, t)


def _turn(r, sol, rng) -> int:
  """One turn of the maximum-score policy with faces drawn from the weights."""
  chances = [float(p) for p in r.face_chances]
  unit, t, dice = r.step, 0, 6
  while True:
    faces = rng.choices(range(1, 7), chances, k=dice)
    options = scoring.keeps(r, tuple(faces.count(f) for f in range(1, 7)))
    if not options:
      return 0
    kept, pts = max(options, key=lambda o: sol.expected[
        min(t + o[1] // unit, sol.cap),
        roll_tables.next_dice(dice, sum(o[0])) - 1])
    t, dice = t + pts // unit, roll_tables.next_dice(dice, sum(kept))
    if t >= sol.cap or sol.bank[t, dice - 1]:
      return t * unit


def test_monte_carlo_turns_agree_with_the_weighted_expected_score():
  r = _kcd_rules(dice=LUCKY_DICE)
  sol = expected_score.solve(r, roll_tables.build(r))
  rng, n = random.Random(5), 5000
  points = np.array([_turn(r, sol, rng) for _ in range(n)])
  exact = sol.expected[0, 5]
  se = points.std() / np.sqrt(n)
  assert abs(points.mean() - exact) < 3 * se, (points.mean(), exact, se)
  fair = _kcd_rules()
  assert exact > expected_score.solve(fair, roll_tables.build(fair)
                                      ).expected[0, 5] + 20 * se


def test_seeded_dice_show_their_weights():
  r = _kcd_rules(dice=LUCKY_DICE)
  faces = np.array(match.Dice(3, r).roll(20_000))
  for f, p in enumerate(LUCKY_DICE, start=1):
    share = (faces == f).mean()
    assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / faces.size), f
  assert match.Dice(3).roll(6) == match.Dice(3, rules_lib.minimal()).roll(6)


@pytest.mark.parametrize("dice,says", [
    ((0.5, 0.5), "six face chances"),
    ((0.3,) * 6, "sum to 1.8"),
    ((1.2, -0.2, 0, 0, 0, 0), "each from 0 to 1"),
    ((float("nan"),) * 6, "six face chances"),
])
def test_bad_dice_are_refused_in_one_line(dice, says):
  with pytest.raises(rules_lib.RulesError, match=r"rules\.dice = ") as e:
    rules_lib.minimal().replace(dice=dice)
  assert says in str(e.value) and "\n" not in str(e.value)


def test_a_bad_dice_config_names_the_field_before_any_compute():
  with pytest.raises(configuration.ConfigError,
                     match=r"^config\.rules\.dice = \(0\.5, 0\.5\)"):
    configuration.check(_kcd(dice=(0.5, 0.5)))


# A hand of three kinds: a die that favours 1 and never shows 3 or 4, two
# that never score alone, three fair dice.
ODD = (Fraction(2, 5), Fraction(1, 5), Fraction(0), Fraction(0),
       Fraction(1, 5), Fraction(1, 5))
MUTE = (Fraction(0), Fraction(1, 4), Fraction(1, 4), Fraction(1, 4),
        Fraction(0), Fraction(1, 4))
FAIR = (Fraction(1, 6),) * 6
HAND = (ODD, MUTE, MUTE, FAIR, FAIR, FAIR)
HAND_DICE = tuple(tuple(float(x) for x in d) for d in HAND[:3])


def _state_of(left: tuple[int, ...], states, k) -> int:
  """The package's dice state (1..S) of the reference's dice positions."""
  counts = tuple(sum(1 for i in left if HAND[i] == c) for c in k.chances)
  return states.index(counts) + 1


def test_a_hand_is_its_kinds_and_their_states():
  k = dice_lib.kinds(HAND_DICE)
  assert k.counts == (1, 2, 3) and k.chances == (ODD, MUTE, FAIR)
  states = dice_lib.states(k.counts)
  assert len(states) == 2 * 3 * 4 - 1 and states[-1] == (1, 2, 3)
  assert dice_lib.labels(HAND_DICE)[-1] == "ABBCCC"
  assert dice_lib.next_state(k.counts, (1, 0, 0), (1, 0, 0)) == (1, 2, 3)
  assert _kcd_rules(dice=HAND_DICE).dice_alike is False
  assert _kcd_rules(dice=((1 / 6,) * 6,) * 2).dice_alike is True


def sets_by_state(sets: dict, state_of) -> dict:
  """The reference's option sets of dice positions (`hand_distribution`)
  as the package's: ((points, dice state), ...) with their chances; dice
  left at other positions of a kind are the same state (`state_of`)."""
  out = {}
  for options, p in sets.items():
    best = {}
    for rest, pts in options:
      s = state_of(rest)
      best[s] = max(best.get(s, 0), pts)
    key = tuple(sorted((pts, s) for s, pts in best.items()))
    out[key] = out.get(key, 0) + p
  return out


def test_hand_roll_probabilities_equal_the_ordered_enumeration():
  """Every dice state of the hand against the ordered rolls of the dice at
  each set of positions it stands for (1e-14 as floats, exact here)."""
  r = _kcd_rules(dice=HAND_DICE)
  k = dice_lib.kinds(r.dice)
  states = dice_lib.states(k.counts)
  tables = roll_tables.build(r)
  for left in [(0, 1, 2, 3, 4, 5), (0, 3, 4), (1, 5), (0,), (2,)]:
    farkle, sets = reference.hand_distribution("kcd", HAND, left)
    n = _state_of(left, states, k)
    out = scoring.hand_outcomes(r, states[n - 1])
    assert out.farkle == farkle
    mine = {tuple(sorted((pts, s) for pts, s in o)): p
            for o, p in zip(out.option_sets, out.probs)}
    assert mine == sets_by_state(
        sets, lambda rest: _state_of(rest, states, k)), left
    assert abs(tables.farkle_prob[n - 1] - float(farkle)) < 1e-14


def test_a_hand_solve_equals_the_plain_reference(tmp_path_factory):
  """Both players with HAND: the reference's match-up of HAND against
  itself (its solve of two hands, `test_each_players_hand_...`)."""
  config = _kcd(goal=300, dice=HAND_DICE)
  config.solver.tol = 1e-15
  w0 = results.load(solved_once(tmp_path_factory, "kcd_hand", config))[0]
  ref = reference.solve_hands("kcd", 300, (HAND, HAND2))
  np.testing.assert_allclose(w0[..., 0, 0], ref[..., 0, 0], rtol=0,
                             atol=1e-12)


def test_a_hand_expected_score_equals_the_plain_recursion():
  r = _kcd_rules(dice=HAND_DICE)
  sol = expected_score.solve(r, roll_tables.build(r), cap=4000)
  assert abs(sol.points_per_turn()
             - reference.expected_hand_turn("kcd", HAND, 4000)) < 1e-9


HAND2 = (ODD, ODD, MUTE, FAIR, FAIR, FAIR)
HAND2_DICE = tuple(tuple(float(x) for x in d) for d in HAND2[:3])


def test_each_players_hand_equals_the_plain_reference(tmp_path_factory):
  """rules.hands: the four match-ups of two hands in one solve, against the
  reference's solve over dice positions; the first player's opening is
  hand 1 against hand 2."""
  config = _kcd(goal=300, hands=(HAND_DICE, HAND2_DICE))
  config.solver.tol = 1e-15
  workdir = solved_once(tmp_path_factory, "kcd_hands", config)
  w0 = results.load(workdir)[0]
  ref = reference.solve_hands("kcd", 300, (HAND, HAND2))
  np.testing.assert_allclose(w0, ref, rtol=0, atol=1e-12)
  summary = results.load(workdir)[3]
  assert summary["first_player_win"] == w0[0, 0, 0, 1]


@pytest.fixture(scope="module")
def hands_game(tmp_path_factory):
  config = _kcd(goal=300, hands=(HAND_DICE, HAND2_DICE))
  config.solver.tol = 1e-15
  return solved_game.SolvedGame.load(
      solved_once(tmp_path_factory, "kcd_hands", config))


def test_advice_keeps_what_the_plain_scorer_offers(hands_game):
  """A roll of the second player's dice: every way to keep dice, against
  the reference's options of the same faces at the same positions; each
  choice is worth the solved value of where it leads."""
  g, r = hands_game, hands_game.rules
  k = dice_lib.kinds(r.hands[1])              # A: ODD x2, B: MUTE, C: fair
  roll = ("A1", "A5", "B2", "C5", "C3", "C3")
  adv = g.advise(solved_game.Position(0, 50, f=1, e=0), roll)
  states = dice_lib.states(k.counts)
  start = int(g.layout.start_state(1)) - len(states)
  mine = {}
  for c in adv.choices:
    mine[c.n - start] = max(mine.get(c.n - start, 0), c.points)
    assert c.win == g.win_probability(solved_game.Position(
        0, 50, f=1, e=0, t=c.t, n=c.n)) or c.wins_now
  positions = (0, 1, 2, 3, 4, 5)      # dice 1, 2 ODD; 3 MUTE; 4-6 fair
  options = reference.hand_options("kcd", positions, (1, 5, 2, 5, 3, 3))
  theirs = {}
  for rest, pts in options.items():
    counts = tuple(sum(1 for i in rest if HAND2[i] == c) for c in k.chances)
    s = states.index(counts) + 1
    theirs[s] = max(theirs.get(s, 0), pts)
  assert mine == theirs
  assert [c.win for c in adv.choices] == sorted(
      (c.win for c in adv.choices), reverse=True)


def test_advise_and_table_from_the_command_line(hands_game):
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.advise", "--workdir",
       hands_game.label, "--b", "0", "--d", "0", "--hands", "1,2",
       "--roll", "A1,B6,B3,C3,C3,C2"],
      cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert "rolled dice ABBCCC: A1,B6,B3,C3,C3,C2" in out.stdout
  assert out.stdout.splitlines()[2].split()[-1] == "best"
  with pytest.raises(solved_game.PositionError,
                     match=r"each die is its letter \(A, B, C:"):
    hands_game.advise(solved_game.Position(0, 0), ["D1"])
  with pytest.raises(solved_game.PositionError, match="B never shows 5"):
    hands_game.advise(solved_game.Position(0, 0), ["B5"])
  text = seat_game.format_turn_table(hands_game, (0, 0), (0, 1))
  assert "n=ABBCCC" in text and "A = die 1" in text


def test_monte_carlo_turns_with_each_die_agree_with_the_solve(hands_game):
  """Turns played from the opening by the advice, each die rolled with its
  own chances: the mean of what each turn leaves (1 - the opponent's value
  after it, 1 on a win) is the solved start value, within 3 standard
  errors."""
  g, rng = hands_game, random.Random(11)
  kinds = dice_lib.kinds(g.rules.hands[1])
  chances = [[float(p) for p in c] for c in kinds.chances]
  labels = dice_lib.labels(g.rules.hands[1])
  states = dice_lib.states(kinds.counts)
  first = int(g.layout.start_state(1)) - len(states)
  outcomes = []
  for _ in range(1500):
    t, n = 0, int(g.layout.start_state(1))
    while True:
      left = states[n - first - 1]
      roll = [f"{chr(65 + k)}{rng.choices(range(1, 7), chances[k])[0]}"
              for k, m in enumerate(left) for _ in range(m)]
      adv = g.advise(solved_game.Position(0, 0, 1, 0, t), roll)
      if not adv.choices:
        outcomes.append(adv.farkle)
        break
      best, dec = adv.choices[0], adv.decision
      if best.wins_now or dec.best == "bank":
        outcomes.append(1.0 if best.wins_now else dec.bank)
        break
      t, n = best.t, best.n
  exact = g.win_probability(solved_game.Position(0, 0, 1, 0))
  x = np.array(outcomes)
  assert abs(x.mean() - exact) < 3 * x.std() / np.sqrt(x.size), (
      x.mean(), exact)
  assert labels[-1] == "AABCCC"


def test_the_catalog_holds_what_its_sources_print():
  """Every named die: six exact chances summing to 1, each within 0.06
  percentage points of the figure its pages print (rounded to 0.1), with
  its sources; the dice of both games; the devil's head's wild face."""
  known = dice_lib.catalog()
  assert {"lucky", "odd", "weighted", "holy_trinity"} <= set(known)
  for name, die in known.items():
    chances = [Fraction(x) for x in die["chances"]]
    assert sum(chances) == 1 and len(chances) == 6, name
    for p, printed in zip(chances, die["printed"]):
      assert abs(float(p) * 100 - printed) < 0.06, (name, p, printed)
    assert die["sources"] and all(u.startswith("https://")
                                  for u in die["sources"])
  assert dice_lib.per_die(("lucky",))[0] == tuple(
      Fraction(x, 22) for x in (6, 1, 2, 3, 4, 6))
  games = {die["game"] for die in known.values()}
  assert games == {"Kingdom Come: Deliverance",
                   "Kingdom Come: Deliverance II"}
  wild = {name: die["wild"] for name, die in known.items() if "wild" in die}
  assert wild == {"devils_head": 1} and known["devils_head"]["note"]
  with pytest.raises(rules_lib.RulesError, match="not in the catalog"):
    rules_lib.minimal().replace(hands=((), ("lucky", "lukcy")))


def test_the_explorer_serves_a_hands_run(hands_game):
  web = TestClient(explorer.create_app(hands_game), base_url="http://localhost")
  table = web.get("/api/table?scores=0,0&counts=1,0").json()
  assert table["dice"]["columns"][0] == "AABCCC"
  assert len(table["rows"][0]["cells"]) == 23
  advice = web.get("/api/advice?scores=0,0&counts=1,0&roll=A1,A5,B2,C5,C3,C3")
  assert advice.status_code == 200
  assert advice.json()["choices"][0]["kept"][0].startswith("A")
  bad = web.get("/api/advice?scores=0,0&counts=1,0&roll=A1,A1,A1")
  assert bad.status_code == 400 and "the hand has" in bad.text


def test_a_game_against_the_computer_with_each_players_hand(hands_game):
  """You hold hand 1, the computer hand 2: each die rolls its own faces
  (never one its chances exclude), a best move gives nothing away, and a
  roll of other dice than those to roll is refused."""
  g, computer, moves = hands_game, match.Computer(hands_game), 0
  for seed, first in ((0, match.PERSON), (1, match.COMPUTER),
                      (2, match.PERSON)):
    s, dice = match.start(g, first=first), match.Dice(seed, g.rules)
    while s.phase != "over":
      if s.mover == match.COMPUTER:
        s = computer.step(s, dice.roll(s.n) if s.phase == "roll" else None)
      elif s.phase == "roll":
        rolled = dice.roll(s.n)
        assert not {"B1", "B5", "A3", "A4"} & set(rolled)  # MUTE, ODD
        s = match.roll(g, s, rolled)
      elif s.phase == "keep":
        s = match.keep(g, s, match.options(g, s)[0].kept)
      else:
        s = match.decide(g, s, g.decision_at(s.key, s.t, s.n).best)
    assert match.summary(s)[0] < 1e-12
    moves += len(s.moves)
  assert moves
  with pytest.raises(solved_game.PositionError, match="are to roll"):
    match.roll(g, match.start(g), ("A1", "B2"))
  with pytest.raises(catalog.StrategyError, match="optimal only"):
    match.Computer(g, "maxscore")


def test_a_web_game_with_dice_that_differ(hands_game):
  web = TestClient(explorer.create_app(hands_game), base_url="http://localhost")
  game = web.post("/api/games", json={"seed": 3}).json()
  assert game["left"] == "dice ABBCCC" and game["phase"] == "roll"
  game = web.post(f"/api/games/{game['id']}", json={"action": "roll"}).json()
  if game["phase"] == "keep":
    kept = game["options"][0]["dice"]
    assert all(isinstance(x, str) and x[0] in "ABC" for x in kept)
    after = web.post(f"/api/games/{game['id']}",
                     json={"action": "keep", "dice": kept})
    assert after.status_code == 200, after.text


def test_analyze_maxscore_reports_each_players_hand(tmp_path):
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.analyze", "maxscore",
       "--config", "configs/kcd.py", "--workdir", str(tmp_path),
       "--config.rules.hands=((), ('lucky',))"],
      cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  lines = out.stdout.splitlines()
  heads = [i for i, l in enumerate(lines) if l.endswith("'s hand:")]
  assert [lines[i] for i in heads] == ["player 1's hand:", "player 2's hand:"]
  for i, dice in zip(heads, ((), ("lucky",))):
    r = _kcd_rules(dice=dice)
    points = expected_score.solve(r, roll_tables.build(r)).points_per_turn()
    assert f"{points:.4f} points per turn" in lines[i + 1]
  for command, says in (("goforit", "not yet for dice that differ"),
                        ("evaluate",
                         "--strategy=memorized: expected optimal")):
    refused = subprocess.run(
        [sys.executable, "-m", "farkle_jax.apps.analyze", command,
         "--config", "configs/kcd.py", "--config.rules.dice=('lucky',)",
         "--strategy", "memorized"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert says in refused.stderr, refused.stderr


def test_strategies_with_each_players_hand_evaluate_and_simulate(hands_game):
  """Exact evaluation of optimal against optimal gives the solved values
  at every key; maximum-score play against it loses ground, and Monte
  Carlo games (each turn starting from the mover's own hand) agree with
  the exact values within 3 standard errors."""
  g = hands_game
  lay, roll, w0 = g.layout, g.run.roll, g.run.w0
  best = policies.optimal(w0, lay, roll)
  same = evaluation.evaluate(best, best, lay, roll)
  np.testing.assert_allclose(same.a_to_move, w0, rtol=0, atol=1e-12)
  assert abs(same.first - w0[0, 0, 0, 1]) < 1e-12
  greedy = policies.max_score(lay, expected_score.solve(lay.rules, roll))
  exact = evaluation.evaluate(greedy, best, lay, roll)
  assert exact.first < same.first and exact.second < same.second
  est = simulation.simulate(greedy, best, lay, roll, 20_000, seed=3)
  for got, se, want in ((est.first, est.first_se, exact.first),
                        (est.second, est.second_se, exact.second)):
    assert abs(got - want) < 3 * se, (got, want, se)
