"""Games of a person against the computer: the rules of play, and what each
decision of the person costs."""

import numpy as np
import pytest

from farkle_jax.strategy import match
from farkle_jax.strategy.solved_game import PositionError
from farkle_jax.strategy.solved_game import SolvedGame


@pytest.fixture(scope="module")
def game():
  return SolvedGame.shipped("default")   # Facebook rules to 3000


def _best_person(game, s):
  """The person follows the advice."""
  if s.phase == "keep":
    return match.keep(game, s, game.advise(match.position(game, s),
                                           s.dice).choices[0].kept)
  return match.decide(game, s, game.decision(match.position(game, s)).best)


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
  dec = game.decision(match.position(game, s))
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
