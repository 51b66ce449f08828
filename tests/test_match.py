"""Games of a person against the computer: the rules of play, and what each
decision of the person costs."""

import numpy as np
import pytest

import reference

from conftest import COMMANDS, play_web_games
from farkle_jax.solver import configuration, driver
from farkle_jax.strategy import match, seat_game
from farkle_jax.strategy.solved_game import Position, PositionError
from farkle_jax.strategy.solved_game import SolvedGame


@pytest.fixture(scope="module")
def game():
  return SolvedGame.shipped("default")   # Facebook rules to 3000


def _best_person(game, s):
  """The person follows the advice."""
  if s.phase == "keep":
    return match.keep(game, s, match.options(game, s)[0].kept)
  return match.decide(game, s, game.decision_at(s.key, s.t, s.n).best)


def _play(game, computer, dice, person, first=match.PERSON, limit=2000):
  s = match.start(game, first)
  for _ in range(limit):
    if s.phase == "over":
      return s
    if s.phase == "roll":
      s = match.roll(game, s, dice.roll(s.n))
    elif s.mover == match.PERSON:
      s = person(game, s)
    else:
      s = computer.step(s, None)
  raise AssertionError("the game did not end")


def test_following_the_advice_gives_nothing_away(game):
  computer = match.Computer(game, "optimal")
  for seed in range(3):
    s = _play(game, computer, match.Dice(seed), _best_person)
    total, worst = match.summary(s)
    assert s.moves and total < 1e-12 and worst == ()
    assert max(match.scores(game, s)) >= game.rules.goal
    assert match.scores(game, s)[s.winner] >= game.rules.goal


def test_a_bad_bank_costs_the_difference_of_the_two_values(game):
  s = match.start(game)._replace(t=400, n=4, phase="decide")
  dec = game.decision(Position(b=0, d=0, t=400, n=4))
  assert dec.best == "roll"   # 400 with 4 dice from 0-0: roll on
  after = match.decide(game, s, "bank")
  (move,) = after.moves
  assert move.made_win == dec.bank and move.best_win == dec.roll
  assert move.loss == pytest.approx(dec.roll - dec.bank, abs=0)
  assert match.scores(game, after) == (400, 0) and after.mover == 1
  assert match.summary(after) == (move.loss, (move,))


def test_a_worse_keep_is_recorded_with_both_values(game):
  s = match.roll(game, match.start(game), (6, 5, 3, 3, 3, 2))
  after = match.keep(game, s, (3, 3, 3))
  (move,) = after.moves
  assert move.made == "keep 3 3 3 (300)" and move.best == "keep 5 (50)"
  assert move.best_win > move.made_win
  assert (after.t, after.n, after.phase) == (300, 3, "decide")


def test_third_farkle_costs_the_penalty(game):
  lay = game.layout
  s = match.start(game, b=1000, d=200)._replace(
      key=(lay.index_of(1000), lay.index_of(200), 2, 0))
  after = match.roll(game, s, (2, 3, 4, 6, 6, 2))
  assert after.mover == match.COMPUTER and after.phase == "roll"
  assert match.scores(game, after) == (500, 200)
  assert after.key[2:] == (0, 0)      # the computer's view: (e, f) = (0, 0)
  assert "lost 500 points" in after.log[-1]


def test_bank_at_500_computer_banks_exactly_from_500(game):
  computer = match.Computer(game, "bank:500")
  decisions = []
  for seed in range(4):
    dice, s = match.Dice(seed), match.start(game, match.COMPUTER)
    while s.phase != "over":
      if s.mover == match.PERSON:   # the computer plays both seats
        s = s._replace(mover=match.COMPUTER)
      if s.phase == "decide":
        decisions.append((s.t, computer.action(s)))
      s = computer.step(s, dice.roll(s.n) if s.phase == "roll" else None)
  assert {a for _, a in decisions} == {"bank", "roll"}
  for t, action in decisions:
    assert action == ("bank" if t >= 500 else "roll"), t


def test_illegal_moves_are_refused(game):
  s = match.roll(game, match.start(game), (6, 5, 3, 3, 3, 2))
  with pytest.raises(PositionError, match="allowed are"):
    match.keep(game, s, (6,))
  with pytest.raises(PositionError, match="waits for dice to keep"):
    match.decide(game, s, "bank")
  with pytest.raises(PositionError, match="3 dice, but n=6"):
    match.roll(game, match.start(game), (1, 2, 3))
  s = match.keep(game, s, (5,))
  assert s.phase == "roll"            # 50 is below the bank minimum
  with pytest.raises(PositionError, match="waits for a roll"):
    match.decide(game, s, "bank")


def test_seeded_dice_repeat():
  assert [match.Dice(4).roll(6) for _ in range(3)] == [
      match.Dice(4).roll(6) for _ in range(3)]
  faces = np.array(match.Dice(0).roll(6000))
  assert set(faces) == set(range(1, 7))


@pytest.fixture(scope="module")
def final_game(tmp_path_factory):
  """Minimal rules to 1000 with an entry minimum and the final round."""
  from configs import tiny
  from farkle_jax.solver import driver
  config = tiny.get_config("minimal")
  config.rules.update(final_round=True, final_round_cap=1000,
                      entry_minimum=300)
  workdir = str(tmp_path_factory.mktemp("final"))
  driver.run(config, workdir)
  return SolvedGame.load(workdir)


def _best_anywhere(game, s):
  if s.phase == "keep":
    return match.keep(game, s, match.options(game, s)[0].kept)
  return match.decide(game, s, game.decision_at(s.key, s.t, s.n).best)


def test_final_round_games_end_after_the_last_turn(final_game):
  computer = match.Computer(final_game, "optimal")
  last_turns = 0
  for seed in range(12):
    s = _play(final_game, computer, match.Dice(seed), _best_anywhere)
    total, _ = match.summary(s)
    assert total < 1e-12
    last_turns += any("one last turn" in line for line in s.log)
    you, comp = match.scores(final_game, s)
    assert max(you, comp) >= 1000
    if s.bar:   # the chaser won only by finishing above the bar
      assert (s.winner == s.mover) == (match.scores(final_game, s)[s.mover]
                                       > s.bar)
  assert last_turns >= 6


def test_the_last_turn(final_game):
  lay = final_game.layout
  s = match.start(final_game)._replace(
      key=(lay.index_of(950), lay.index_of(900), 0, 0))
  s = match.roll(final_game, s, (1, 2, 3, 4, 6, 6))
  s = match.keep(final_game, s, (1,))
  assert s.phase == "decide"
  s = match.decide(final_game, s, "bank")          # 1050: the computer's turn
  assert s.bar == 1050 and s.mover == match.COMPUTER and s.phase == "roll"
  assert "one last turn to beat 1050" in s.log[-1]
  chances = match.options(final_game, s, (5, 2, 3, 4, 6, 6))
  assert chances[0].win == pytest.approx(
      final_round_chance(final_game, 1100 - 900 - 50, 5), abs=1e-15)
  lost = match.roll(final_game, s, (2, 3, 4, 6, 6, 2))
  assert lost.phase == "over" and lost.winner == match.PERSON
  s = match.roll(final_game, s, (1, 1, 1, 2, 3, 4))  # 900 + 1000 > 1050
  s = match.keep(final_game, s, (1, 1, 1))
  assert s.phase == "over" and s.winner == match.COMPUTER
  assert match.scores(final_game, s) == (1050, 1900)


def final_round_chance(game, need_points, n):
  from farkle_jax.game import final_round
  return final_round.chance(game.rules, need_points // 50, n)


@pytest.fixture(scope="module")
def seat_games(seats_runs, tiny_runs):
  """Minimal rules to 1,000: three players, and two players by both
  engines (a SeatGame and a SolvedGame of the same rules)."""
  from farkle_jax.strategy.seat_game import SeatGame
  return (SeatGame.load(seats_runs(3)), SeatGame.load(seats_runs(2)),
          SolvedGame.load(tiny_runs("minimal")[3]))


def test_three_players_take_turns_and_the_winner_reaches_the_goal(seat_games):
  three = seat_games[0]
  computer = match.Computer(three)
  for seed in range(3):
    s = _play(three, computer, match.Dice(seed), _best_person)
    total, _ = match.summary(s)
    assert s.players == 3 and total < 1e-12
    assert match.scores(three, s)[s.winner] >= three.rules.goal
    assert sorted(match.scores(three, s))[1] < three.rules.goal
  s = match.start(three, first=2, at=(100, 200, 300))
  assert match.scores(three, s) == (100, 200, 300) and s.mover == 2
  banked = match.decide(three, s._replace(t=250, n=3, phase="decide"), "bank")
  assert match.scores(three, banked) == (100, 200, 550)
  assert banked.mover == 0 and banked.log[-1] == "computer 2 banked 250: " \
      "550 points"


def test_a_bad_bank_among_three_costs_the_seat_values_difference(seat_games):
  three = seat_games[0]
  s = match.start(three)._replace(t=300, n=6, phase="decide")
  vectors = three.decision((0, 0, 0), 300, 6)   # every seat's, mover first
  after = match.decide(three, s, "roll" if vectors["best"] == "bank"
                       else "bank")
  (move,) = after.moves
  assert move.loss == pytest.approx(
      abs(vectors["bank"][0] - vectors["roll"][0]), abs=1e-15)
  assert move.loss > 0


def test_the_same_two_player_game_from_either_engine(seat_games):
  """A game of two players plays out alike, roll for roll, whether the
  chunk engine's or the seat engine's solution answers."""
  _, pair, solved = seat_games
  for seed in range(4):
    logs = [_play(g, match.Computer(g), match.Dice(seed), _best_person).log
            for g in (pair, solved)]
    assert logs[0] == logs[1]


def test_more_players_take_the_optimal_computer_only(seat_games):
  from farkle_jax.strategy.catalog import StrategyError
  with pytest.raises(StrategyError, match="plays optimal only"):
    match.Computer(seat_games[0], "bank:300")
  with pytest.raises(PositionError, match="3 scores"):
    match.start(seat_games[0], at=(0, 0))


def test_three_get_on_the_board_under_a_penalty(tmp_path):
  """Facebook rules to 400 with an entry minimum of 350 for three: no
  first bank is below 350, the advice gives nothing away, and a key keeps
  saying who is on the board (a player back at 0 after penalties banks
  from the bank minimum)."""
  from farkle_jax.solver import configuration, driver
  from farkle_jax.strategy.seat_game import SeatGame
  config = configuration.base("facebook")
  config.rules.update(goal=400, floor=-150, players=3, entry_minimum=350)
  config.solver.update(tol=1e-14, norm="absolute")
  driver.run(config, str(tmp_path))
  three = SeatGame.load(str(tmp_path))
  s = match.start(three)
  assert three.bank_minimum_at(s.key) == 350
  assert three.bank_value(three.turn((0, 0, 0)), 300 // 50) is None
  banked = three.after_bank(s.key, 350)   # the next mover's key
  assert three.key_scores(banked) == (0, 0, 350)
  again = (banked[2], *banked[:2], banked[5], *banked[3:5])   # its turn
  assert three.key_scores(again) == (350, 0, 0)
  assert three.bank_minimum_at(again) == 300
  # -150 after three farkles: off the board still, or on it.
  off = (three.seats.index_of(-150, on_board=False),) + s.key[1:]
  assert three.key_scores(off) == (-150, 0, 0)
  assert three.bank_minimum_at(off) == 350
  assert three.bank_minimum_at(three.key((-150, 0, 0))) == 300
  computer = match.Computer(three)
  for seed in range(4):
    s = _play(three, computer, match.Dice(seed), _best_person)
    total, _ = match.summary(s)
    assert total < 1e-12 and match.scores(three, s)[s.winner] >= 400
    seen = set()
    for line in s.log:
      if " banked " in line:
        who, points = line.split(" banked ")[0], int(
            line.split(" banked ")[1].split(":")[0])
        assert who in seen or points >= 350, line
        seen.add(who)


@pytest.fixture(scope="module")
def final_three(tmp_path_factory):
  """Three players, minimal rules to 500 with a final round (cap 1,000)."""
  from farkle_jax.solver import configuration, driver
  from farkle_jax.strategy.seat_game import SeatGame
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3, final_round=True,
                      final_round_cap=1000)
  config.solver.update(tol=1e-14, norm="absolute")
  workdir = str(tmp_path_factory.mktemp("final_three"))
  driver.run(config, workdir)
  return SeatGame.load(workdir)


def test_three_players_play_the_last_turns(final_three):
  """After a bank at the goal each other player takes one last turn; the
  bar's holder at the end wins, past every other total. Playing the
  advice in every seat gives nothing away."""
  game, in_final = final_three, 0
  computer = match.Computer(game)
  for seed in range(12):
    s = _play(game, computer, match.Dice(seed),
              lambda g, s: computer.step(s, None))
    total, _ = match.summary(s)
    assert total < 1e-12
    points = match.scores(game, s)
    assert points[s.winner] >= game.rules.goal
    assert sorted(points)[-2] < points[s.winner]
    reached = [line for line in s.log if "the bar for the last" in line]
    in_final += bool(reached)
    assert s.final or not reached
  assert in_final >= 6


def test_a_chasers_chances_are_the_references(final_three):
  """A chaser's chance at the start of the last turn, against the plain
  reference's recursion over the last turns."""
  game = final_three
  for bar, (s0, s1, s2) in ((500, (450, 100, 0)), (650, (400, 250, 150)),
                            (950, (0, 50, 450))):
    first = game.key((s1, s2, s0))          # the first chaser to move
    got = game.last_turns.decision(first, bar, 1, 0, 6)
    want = reference.final_round_players(3, 500, 1000, ((1, s1), (2, s2)),
                                         bar, 0)
    assert got.bank is None and got.best == "roll"
    assert got.roll == pytest.approx(want[1], abs=1e-12)
    last = game.key((s2, s0, s1))
    want = reference.final_round_players(3, 500, 1000, ((2, s2),), bar, 0)
    assert game.last_turns.decision(last, bar, 0, 0, 6).roll == (
        pytest.approx(want[2], abs=1e-12))


def test_last_turns_with_dice_that_differ(tmp_path):
  """One lucky die among five fair ones and a final round: the chasers'
  rolls are read by kind ('A1'), and games end at the goal or after the
  last turns, the advice in every seat giving nothing away."""
  from farkle_jax.solver import configuration, driver
  from farkle_jax.strategy.seat_game import SeatGame
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3, final_round=True,
                      final_round_cap=1000,
                      dice=((0.25, 0.1, 0.15, 0.15, 0.2, 0.15),))
  driver.run(config, str(tmp_path))
  game = SeatGame.load(str(tmp_path))
  computer, in_final = match.Computer(game), 0
  for seed in range(8):
    s = _play(game, computer, match.Dice(seed, game.rules),
              lambda g, s: computer.step(s, None))
    assert match.summary(s)[0] < 1e-12
    points = match.scores(game, s)
    assert points[s.winner] >= 500 and sorted(points)[-2] < points[s.winner]
    in_final += any("the bar for the last" in line for line in s.log)
    chasers = [line for line in s.log if "kept A" in line or "kept B" in line]
    assert chasers   # dice named by kind
  assert in_final >= 3


def test_a_web_game_of_three_plays_the_last_turns(final_three):
  """The web game's API over the same rules: games end, some after the
  last turns, whose bar the page is given."""
  ends = play_web_games(final_three, range(6))
  assert sum(g["bar"] is not None for g in ends) >= 2


@pytest.fixture(scope="module")
def shared_three(tmp_path_factory):
  """Three players, minimal rules to 300, a final round (cap 200) whose
  ties at the bar share the win."""
  config = configuration.base("minimal")
  config.rules.update(goal=300, players=3, final_round=True,
                      final_round_cap=200, final_round_ties="shared")
  config.solver.update(tol=1e-14, norm="absolute")
  workdir = str(tmp_path_factory.mktemp("shared_three"))
  driver.run(config, workdir)
  return seat_game.SeatGame.load(workdir)


def test_a_chaser_may_tie_the_bar_and_share_the_win(shared_three):
  """Computer 1 banks 350; computer 2 farkles; you reach 350 with four
  dice left: banking the tie is half a win, rolling on passes the bar
  unless the four dice farkle (17/108 on the minimal rules, by the
  reference's enumeration); you bank and share the win."""
  game = shared_three
  s = match.start(game, first=1, at=(200, 250, 150))
  s = match.keep(game, match.roll(game, s, (1, 2, 3, 4, 6, 6)), (1,))
  s = match.decide(game, s, "bank")
  assert (s.bar, s.leader, s.mover) == (350, 1, 2)
  assert s.log[-1].endswith("the bar for the last turns (ties share the "
                            "win)")
  s = match.roll(game, s, (2, 3, 4, 6, 6, 2))       # computer 2: farkle
  s = match.keep(game, match.roll(game, s, (1, 5, 2, 3, 4, 6)), (1, 5))
  assert (s.phase, s.t, s.n) == ("decide", 150, 4)
  farkle, _ = reference.distribution("minimal", 4)
  dec = match._decision(game, s)
  assert dec.bank == pytest.approx(0.5, abs=1e-14)
  assert dec.roll == pytest.approx(1 - float(farkle), abs=1e-14)
  s = match.decide(game, s, "bank")
  assert s.phase == "over" and s.winner is None and s.sharers == (0, 1)
  assert match.scores(game, s) == (350, 350, 150)
  assert match.result(s) == "you and computer 1 share the win"
  assert s.log[-1].endswith("tying the bar; you and computer 1 share the "
                            "win")
  assert s.moves[-1].loss == pytest.approx(dec.roll - 0.5, abs=1e-14)


def test_a_chasers_chances_with_shared_ties_are_the_references(shared_three):
  """A chaser's chance at the start of the last turn, against the plain
  reference's recursion over the set of seats tied at the bar: the first
  chaser against one holder, the last against two (after a tie)."""
  game = shared_three
  for bar, (s0, s1, s2) in ((300, (250, 200, 0)), (350, (150, 250, 50)),
                            (450, (0, 200, 100))):
    first = game.key((s1, s2, s0))
    got = game.last_turns.decision(first, bar, 1, 0, 6, 1)
    want = reference.final_round_players(
        3, 300, 200, ((1, s1), (2, s2)), bar, 0, ties="shared")
    assert got.bank is None
    assert got.roll == pytest.approx(want[1], abs=1e-12)
    last = game.key((s2, s0, s1))
    got = game.last_turns.decision(last, bar, 0, 0, 6, 2).roll
    want = reference.final_round_players(
        3, 300, 200, ((2, s2),), bar, (0, 1), ties="shared")
    alone = reference.final_round_players(
        3, 300, 200, ((2, s2),), bar, 0, ties="shared")
    assert got == pytest.approx(want[2], abs=1e-12)
    assert abs(want[2] - alone[2]) > 1e-3   # a third of a win, not half


def test_three_may_share_the_win(shared_three):
  """Computer 1 banks 350, computer 2 ties it, you face two holders: your
  chance at the start and at a tie are the reference's with both holding
  the bar (a bank at the tie a third of the win); you bank and all three
  share."""
  game = shared_three
  s = match.start(game, first=1, at=(200, 250, 250))
  s = match.keep(game, match.roll(game, s, (1, 2, 3, 4, 6, 6)), (1,))
  s = match.decide(game, s, "bank")
  s = match.keep(game, match.roll(game, s, (1, 2, 3, 4, 6, 6)), (1,))
  # Seats counted from computer 1, who reached the goal; you are seat 2.
  want = reference.final_round_players(3, 300, 200, ((2, 200),), 350,
                                       (0, 1), ties="shared")
  assert s.phase == "decide"
  assert match._decision(game, s).bank == pytest.approx(want[1], abs=1e-12)
  s = match.decide(game, s, "bank")   # computer 2 ties the bar
  assert "tying the bar" in s.log[-1] and s.mover == match.PERSON
  assert match._decision(game, s).roll == pytest.approx(want[2], abs=1e-12)
  s = match.keep(game, match.roll(game, s, (1, 5, 2, 3, 4, 6)), (1, 5))
  farkle, _ = reference.distribution("minimal", 4)
  dec = match._decision(game, s)
  assert dec.bank == pytest.approx(1 / 3, abs=1e-14)
  assert dec.roll == pytest.approx(1 - float(farkle), abs=1e-14)
  s = match.decide(game, s, "bank")
  assert s.sharers == (0, 1, 2) and match.scores(game, s) == (350,) * 3
  assert match.result(s) == ("you, computer 1 and computer 2 share the "
                             "win")


def test_games_with_shared_ties_give_nothing_away(shared_three):
  """Last turns after a bank at the goal (optimal play would rather roll
  on to the cap), the advice in every seat: nothing given away, and
  each game ends with one winner at the top or the seats tied there
  sharing; web games report the result in words."""
  game, computer = shared_three, match.Computer(shared_three)
  for seed in range(12):
    first = seed % 3   # at 250, the next seats at 200 and 150
    at = tuple((250, 200, 150)[(i - first) % 3] for i in range(3))
    s = match.start(game, first, at=at)
    s = match.keep(game, match.roll(game, s, (1, 2, 3, 4, 6, 6)), (1,))
    s = match.decide(game, s, "bank")
    assert (s.leader, s.bar) == (first, 350)
    dice, scripted = match.Dice(seed), len(s.moves)
    while s.phase != "over":
      s = computer.step(s, dice.roll(s.n) if s.phase == "roll" else None)
    assert sum(m.loss for m in s.moves[scripted:]) < 1e-12
    points = match.scores(game, s)
    top = [i for i, x in enumerate(points) if x == max(points)]
    assert (s.sharers == tuple(top) if s.sharers else top == [s.winner])
  ends = play_web_games(game, range(4))
  assert all(g["result"].endswith((" won", " share the win")) for g in ends)
  assert all(g["ties_shared"] for g in ends)


def test_the_last_turn_of_two_may_share_a_tie(tmp_path):
  """Two players, shared ties: the chaser at 900 against 1,050 keeps 1
  and 5 (four dice left) and may bank the tie for half a win."""
  from configs import tiny
  config = tiny.get_config("minimal")
  config.rules.update(final_round=True, final_round_cap=1000,
                      final_round_ties="shared")
  driver.run(config, str(tmp_path))
  game = SolvedGame.load(str(tmp_path))
  lay = game.layout
  s = match.start(game)._replace(
      key=(lay.index_of(900), lay.index_of(950), 0, 0), bar=1050)
  s = match.keep(game, match.roll(game, s, (1, 5, 2, 3, 4, 6)), (1, 5))
  assert s.phase == "decide"
  farkle, _ = reference.distribution("minimal", 4)
  dec = match._decision(game, s)
  assert (dec.bank, dec.best) == (0.5, "roll")
  assert dec.roll == pytest.approx(1 - float(farkle), abs=1e-14)
  computer = match.Computer(game, "bank:300")   # a last turn: its chance
  assert computer.action(s._replace(mover=match.COMPUTER)) == "roll"
  s = match.decide(game, s, "bank")
  assert s.phase == "over" and s.sharers == (0, 1)
  assert match.scores(game, s) == (1050, 1050)
  assert match.result(s) == "you and computer share the win"
