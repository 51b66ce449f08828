"""The N-player solver against independent evidence: the plain reference
(tests/reference.py, `solve_players`) for three and four players to 1e-12,
the two-player solver for two players (with and without a penalty), and
distributions over the winner everywhere."""

import importlib
import re
from fractions import Fraction

import numpy as np
import pytest

import reference
from conftest import COMMANDS
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import configuration, driver, multiplayer, results
from farkle_jax.strategy import match, seat_game, seated
from farkle_jax.strategy.positions import PositionError


def _config(preset, goal, players, floor=None, **rules):
  config = configuration.base(preset)
  config.rules.goal = goal
  config.rules.players = players
  if floor is not None:
    config.rules.floor = floor
  config.rules.update(rules)
  config.solver.tol = 1e-14
  config.solver.norm = "absolute"
  config.solver.method = "seats"   # also for two players
  return config


def _solve(tmp_path, *args, **kwargs):
  workdir = str(tmp_path)
  summary = driver.run(_config(*args, **kwargs), workdir)
  return summary, np.load(f"{workdir}/start_values.npy")


# Three players to 500 in the thorough tier: 300 shows the same for three
# and four players.
@pytest.mark.parametrize("players, goal", [
    (3, 300), pytest.param(3, 500, marks=pytest.mark.thorough), (4, 300)])
def test_agrees_with_the_plain_reference(tmp_path, players, goal):
  summary, w = _solve(tmp_path, "minimal", goal, players)
  ref, _ = reference.solve_players(players, goal)
  w = w.reshape(ref.shape)
  np.testing.assert_allclose(w, ref, rtol=0, atol=1e-12)
  assert summary["converged"] and summary["iterations"] == 2
  assert np.abs(w.sum(-1) - 1).max() < 1e-12


@pytest.mark.parametrize("players, goal, cap, ties", [
    (3, 300, 200, "leader"), (4, 250, 100, "leader"),
    (3, 300, 200, "shared")])
def test_a_final_round_agrees_with_the_plain_reference(tmp_path, players,
                                                       goal, cap, ties):
  """Banking at the goal gives every other player one last turn in seat
  order (`solver.last_turns`); turns run past the goal up to the cap. The
  reference follows every turn to the cap and plays the last turns by its
  own recursion (with shared ties, over the set of seats tied at the
  bar)."""
  summary, w = _solve(tmp_path, "minimal", goal, players, final_round=True,
                      final_round_cap=cap, final_round_ties=ties)
  ref, _ = reference.solve_players(players, goal, cap=cap, ties=ties)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)
  plain, _ = reference.solve_players(players, goal)
  assert np.abs(ref - plain).max() > 0.1   # the rule changes the values
  assert summary["converged"]
  # Every in-turn vector of a position, past the goal too, as the
  # reference's last sweep has it.
  game = seat_game.SeatGame.load(str(tmp_path))
  scores = (0, 100, 50, 150)[:players]
  turn = game.turn(scores)
  _, V = reference.solve_players(players, goal, cap=cap, ties=ties)
  at = tuple(x // 50 for x in scores)
  got = np.stack([turn.rows[t, :, :-1] for t in sorted(V)])
  want = np.stack([[V[t][n][at] for n in range(6)] for t in sorted(V)])
  np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
  assert game.advice(scores, t=goal, n=3)["best"] in ("bank", "roll")
  with pytest.raises(PositionError, match=f"reaches the final-round cap, "
                     f"{cap} past the goal {goal}; bank to win"):
    game.decision(scores, goal + cap + 500, 1)


@pytest.mark.parametrize("ties", ["leader", "shared"])
def test_a_final_round_of_two_gives_the_two_player_values(tmp_path, ties):
  """The seat engine's last turns against the two-player solver's chaser
  table, with a bank minimum, a penalty and a floor; shared ties are half
  a win in both."""
  rules = dict(final_round=True, final_round_cap=600, final_round_ties=ties)
  _, w = _solve(tmp_path / "seats", "facebook", 600, 2, floor=-300,
                **rules)
  config = _config("facebook", 600, 2, floor=-300, **rules)
  config.solver.method = "ordered"
  driver.run(config, str(tmp_path / "two"))
  w2 = np.load(tmp_path / "two" / "start_values.npy")
  np.testing.assert_allclose(w[..., 0], w2, rtol=0, atol=1e-12)


def _sheet(name: str, goal: int, **rules):
  """A shipped rule sheet's config, made small (floor -300 under a
  penalty), to 1e-14."""
  config = importlib.import_module(f"farkle_jax.configs.{name}").get_config()
  config.rules.goal = goal
  if config.rules.floor < 0:
    config.rules.floor = -300
  config.rules.update(rules)
  config.solver.update(tol=1e-14, norm="absolute")
  return config


SHEETS = ("cardgames_io", "kcd", "playmonster", "zilch", "minimal",
          "facebook")
FINAL = dict(final_round=True, final_round_cap=300)


@pytest.mark.parametrize("name, rules", [
    *((name, {}) for name in SHEETS),
    ("zilch", dict(FINAL, final_round_ties="shared")),
    ("minimal", dict(entry_minimum=300)),
    ("facebook", dict(entry_minimum=500)),   # off-board scores of their own
    ("kcd", dict(hands=((), (0.4, 0.2, 0, 0, 0.2, 0.2)))),   # own hands
    *(pytest.param(name, rules, marks=pytest.mark.thorough)
      for name in SHEETS for rules in (FINAL, dict(
          FINAL, final_round_ties="shared")))])
def test_two_players_on_the_seat_engine_match_the_two_player_solver(
    tmp_path, name, rules):
  """Every shipped rule sheet, and the rules that change a final round or
  the entry, solved by both engines: the seat engine reads each rule as
  the two-player solver does (it once took shared ties to the leader)."""
  got = {}
  for method in ("ordered", "seats"):
    config = _sheet(name, 600, **rules)
    config.solver.method = method
    driver.run(config, str(tmp_path / method))
    got[method] = np.load(tmp_path / method / "start_values.npy")
  np.testing.assert_allclose(got["seats"][..., 0], got["ordered"], rtol=0,
                             atol=1e-12)


@pytest.mark.parametrize("scratch", [False, pytest.param(
    True, marks=pytest.mark.thorough)])
def test_each_players_own_hand_agrees_with_the_plain_reference(tmp_path,
                                                               scratch):
  """Three players of the KCD rules to 150, each with a hand of their own
  (two of dice that differ, one fair): every assignment of the hands to
  the seats against the reference's iteration over dice positions, started
  from the engine's values (one sweep, the default tier) or from 1/3 (to
  1e-15, 32 s, the thorough tier); two players with hands on the seat
  engine equal the two-player solver (`test_two_players_on_the_seat_...`)."""
  from test_dice import FAIR, HAND, HAND2, HAND2_DICE, HAND_DICE
  config = _config("minimal", 150, 3)
  config.rules = importlib.import_module(
      "farkle_jax.configs.kcd").get_config().rules
  config.rules.update(goal=150, players=3, hands=(HAND_DICE, HAND2_DICE, ()))
  summary = driver.run(config, str(tmp_path))
  w = np.load(tmp_path / "start_values.npy")
  assert summary["converged"] and w.shape == (3,) * 6 + (3,)
  ref = reference.solve_players_hands(
      3, 150, (HAND, HAND2, (FAIR,) * 6), max_iter=500 if scratch else 1,
      start=None if scratch else w)
  np.testing.assert_allclose(w, ref, rtol=0, atol=1e-12)
  # The hands matter: the seat of the fair hand fares differently.
  assert np.abs(w[0, 0, 0, 0, 1, 2] - w[0, 0, 0, 2, 0, 1][[1, 2, 0]]
                ).max() > 1e-3


# Two players in the thorough tier: three show the same rule.
@pytest.mark.parametrize("players, goal, entry", [
    pytest.param(2, 1000, 500, marks=pytest.mark.thorough), (3, 800, 600)])
def test_an_entry_minimum_agrees_with_the_plain_reference(tmp_path, players,
                                                          goal, entry):
  """Getting on the board with at least `entry` (no penalty: a score of 0
  is "not on the board"): the seat engine against the reference, and for
  two players against the two-player solver too. The goals are the smallest
  where the rule changes some decision (below them a player at 0 never banks
  short of the goal). Three players: the reference's own iteration, started
  from the engine's values, leaves them where they are (they are its fixed
  point; from 1/3 everywhere it takes 30 s to reach the same to 1e-12)."""
  summary, w = _solve(tmp_path / "seats", "minimal", goal, players,
                      entry_minimum=entry)
  start = None if players == 2 else w.reshape((goal // 50,) * players
                                              + (players,))
  ref, _ = reference.solve_players(players, goal, entry=entry, start=start)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)
  _, plain = _solve(tmp_path / "plain", "minimal", goal, players)
  assert np.abs(w - plain).max() > 1e-4   # the rule changes the values
  if players == 2:
    config = _config("minimal", goal, 2, entry_minimum=entry)
    config.solver.method = "ordered"
    two = driver.run(config, str(tmp_path / "two"))
    w2 = np.load(tmp_path / "two" / "start_values.npy")
    np.testing.assert_allclose(w[..., 0], w2, rtol=0, atol=1e-12)
    assert abs(two["first_player_win"] - summary["seat_win"][0]) < 1e-12


@pytest.mark.parametrize("preset, goal, floor", [("minimal", 1000, None),
                                                 ("facebook", 600, -300)])
def test_two_players_equal_the_two_player_solver(tmp_path, tiny_runs, preset,
                                                 goal, floor):
  _, w = _solve(tmp_path / "seats", preset, goal, 2, floor)
  if preset == "minimal":   # the tiny game, solved once for the suite
    w2 = tiny_runs(preset)[0]
  else:
    two = _config(preset, goal, 2, floor)
    two.solver.method = "ordered"
    driver.run(two, str(tmp_path / "two"))
    w2 = np.load(tmp_path / "two" / "start_values.npy")
  np.testing.assert_allclose(w[..., 0], w2, rtol=0, atol=1e-12)
  np.testing.assert_allclose(w.sum(-1), 1, rtol=0, atol=1e-12)


def test_loaded_dice_agree_with_the_plain_reference(tmp_path):
  """Six dice alike that show 1 and 5 more often (0.26 each): three
  players against the reference's own enumeration of the weighted rolls."""
  lucky = (Fraction(13, 50), Fraction(3, 25), Fraction(3, 25),
           Fraction(3, 25), Fraction(13, 50), Fraction(3, 25))
  summary, w = _solve(tmp_path, "minimal", 300, 3,
                      dice=tuple(float(x) for x in lucky))
  ref, _ = reference.solve_players(3, 300, faces=lucky)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)
  fair, _ = reference.solve_players(3, 300)
  assert np.abs(ref - fair).max() > 0.01   # the weights matter
  assert summary["converged"]


def test_dice_that_differ_agree_with_the_plain_reference(tmp_path):
  """One lucky die among five fair ones, shared by three players: the
  seat engine's 11 dice states (which kinds are left) against the
  reference's own enumeration of every subset of the hand's dice. Started
  from the engine's values, the reference's iteration leaves them where
  they are (its fixed point; from 1/3 it takes 30 s to the same)."""
  lucky = (Fraction(1, 4), Fraction(1, 10), Fraction(3, 20),
           Fraction(3, 20), Fraction(1, 5), Fraction(3, 20))
  hand = (lucky,) + tuple((Fraction(1, 6),) * 6 for _ in range(5))
  summary, w = _solve(tmp_path, "minimal", 300, 3,
                      dice=(tuple(float(x) for x in lucky),))
  assert summary["converged"]
  start = w.reshape((6,) * 3 + (3,))
  ref, _ = reference.solve_players(3, 300, hand=hand, start=start)
  np.testing.assert_allclose(start, ref, rtol=0, atol=1e-12)
  fair, _ = reference.solve_players(3, 300)
  assert np.abs(ref - fair).max() > 0.01   # the lucky die matters
  # Advice names the dice by kind ('A1': the lucky die); a game played by
  # the advice in every seat gives nothing away and ends at the goal.
  game = seat_game.SeatGame.load(str(tmp_path))
  advice = game.advice((0, 100, 200), roll=("A1", "B5", "B3", "B4", "B6",
                                            "B2"))
  best = advice["choices"][0]
  assert len(advice["choices"]) == 3 and best["t"] < 300   # A1, B5, both
  then = advice["then"]
  assert max(then["bank"][0], then["roll"][0]) == pytest.approx(
      best["win"][0], abs=1e-14)
  assert game.table((0, 0, 0), t_last=100)["dice"]["columns"][0] == "ABBBBB"
  assert len(game.bank_thresholds((0, 0, 0))) == 11   # every dice state
  out = COMMANDS("farkle_jax.apps.advise", "--workdir", str(tmp_path),
                 "--scores", "0,100,200", "--t", "100", "--n", "9")
  assert out.returncode == 0, out.stderr
  assert "t=100 with dice BBBBB: " in out.stdout   # state 9, by name
  computer = match.Computer(game)
  for seed in range(2):
    s = match.start(game)
    while s.phase != "over":
      s = (match.roll(game, s, match.Dice(seed + s.turn, game.rules).roll(
          s.n)) if s.phase == "roll" else computer.step(s, None))
    assert match.summary(s)[0] < 1e-12
    assert match.scores(game, s)[s.winner] >= 300


# The devil's head in the thorough tier: the lucky die shows the states.
@pytest.mark.parametrize("dice", [
    ((0.25, 0.1, 0.15, 0.15, 0.2, 0.15),),
    pytest.param(("devils_head",), marks=pytest.mark.thorough)])
def test_dice_that_differ_of_two_give_the_two_player_values(tmp_path, dice):
  """One lucky die, or the devil's head (a joker), among five fair ones:
  the seat engine's dice states against the two-player solver's."""
  _, w = _solve(tmp_path / "seats", "minimal", 1000, 2, dice=dice)
  config = _config("minimal", 1000, 2, dice=dice)
  config.solver.method = "ordered"
  driver.run(config, str(tmp_path / "two"))
  w2 = np.load(tmp_path / "two" / "start_values.npy")
  np.testing.assert_allclose(w[..., 0], w2, rtol=0, atol=1e-12)


@pytest.mark.parametrize("preset, hands, says", [
    ("minimal", ((), ()), "one hand per player (3)"),
    ("facebook", ((), (), ()), "() with rules.penalty=500")])
def test_hands_that_cannot_be_are_refused_for_three(preset, hands, says):
  config = _config(preset, 1000, 3, hands=hands)
  with pytest.raises(configuration.ConfigError, match=re.escape(says)):
    configuration.check(config)


def test_a_penalty_at_every_farkle_agrees_with_the_reference(tmp_path):
  """penalty_count 1: a farkle at the floor keeps its stage (no rotation
  cycle there); two players against the plain reference, three are
  distributions."""
  _, w = _solve(tmp_path / "two", "facebook", 600, 2, -300, penalty_count=1)
  ref, _ = reference.solve("facebook", 600, -300, penalty_count=1)
  np.testing.assert_allclose(w[..., 0], ref, rtol=0, atol=1e-12)
  summary, w = _solve(tmp_path / "three", "facebook", 300, 3, -150,
                      penalty_count=1)
  assert summary["converged"] and w.min() >= 0
  assert np.abs(w.sum(-1) - 1).max() < 1e-12
  seats = SeatsLayout(rules_lib.facebook(goal=300, floor=-150).replace(
      players=3, penalty_count=1))
  with pytest.raises(ValueError, match="without a farkle penalty"):
    seated.evaluate(seats, w, None, "max_score")


def test_first_guesses_come_from_stages_solved_before():
  """Each key's first guess lies in an earlier stage, also where the bank
  minimum spans several scores (so a whole block is one stage)."""
  for rules in (rules_lib.minimal(goal=800),
                rules_lib.minimal(goal=800).replace(bank_minimum=150)):
    seats = SeatsLayout(rules.replace(players=3))
    tables, _ = multiplayer.build(seats, 64)
    keys, warm = np.asarray(tables.keys), np.asarray(tables.warm)
    stage = seats.stage(seats.key_fields())
    row = np.broadcast_to(np.arange(len(keys))[:, None], keys.shape)
    guessed = (keys < seats.num_keys) & (warm < seats.num_keys)
    assert guessed.any()
    assert (stage[warm[guessed]] < row[guessed]).all()


@pytest.mark.parametrize("newton", [False, None])
def test_three_players_with_a_penalty_are_distributions(tmp_path, newton):
  """Every sweep (and every Newton step: its corrections sum to zero over
  the seats) keeps each key's values a distribution over the winner, so a
  loose tolerance shows it as well as a tight one."""
  config = _config("facebook", 300, 3, floor=-150)
  config.solver.tol = 1e-8
  config.solver.newton = newton
  summary = driver.run(config, str(tmp_path))
  w = np.load(tmp_path / "start_values.npy")
  assert summary["converged"] and summary["iterations"] > (2 if newton is False else 1)
  assert w.min() >= 0 and np.abs(w.sum(-1) - 1).max() < 1e-12
  first, second, third = summary["seat_win"]
  assert first > second > third


def test_a_cycle_without_a_pure_equilibrium_is_reported(unsettled_game):
  """Three players to 1,300: one rotation cycle (3 keys) whose policy steps
  alternate between two profiles 6.9e-4 apart forever; the run keeps their
  midpoint, says so, and its second sweep still changes nothing."""
  _, summary, w = unsettled_game
  assert summary["unsettled_keys"] == 3
  assert 1e-4 < summary["unsettled_apart"] < 1e-2
  assert summary["converged"] and summary["iterations"] == 2
  assert np.abs(w.sum(-1) - 1).max() < 1e-12
