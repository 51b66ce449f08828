"""Queries of a solved run: win probabilities, decisions and advice for a
roll, against the published worked example and an independent scorer."""

import itertools
import json
import os

import numpy as np
import pytest

import reference
from farkle_jax.solver import queries
from farkle_jax.strategy.solved_game import Position, PositionError, SolvedGame
from farkle_jax.strategy.positions import parse_dice

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))


@pytest.fixture(scope="module")
def facebook():
  return SolvedGame.shipped("facebook")


def test_published_worked_example(facebook):
  example = PUBLISHED["facebook"]["worked_example"]
  adv = facebook.advise(Position(0, 0), (6, 5, 3, 3, 3, 2))
  assert [(c.t, c.n) for c in adv.choices] == [(50, 5), (350, 2), (300, 3)]
  by_state = {(c.t, c.n): c for c in adv.choices}
  for option in example["options"]:
    got = by_state[option["to"]["t"], option["to"]["n"]]
    assert got.win == pytest.approx(option["W"], abs=6e-7), option["take"]
  assert adv.choices[0].kept == (5,) and example["best"] == "one 5"
  # Below the bank minimum the only move is to roll on.
  assert adv.decision.bank is None and adv.decision.best == "roll"
  assert adv.decision.roll == pytest.approx(adv.choices[0].win, abs=1e-15)


def test_decision_values_are_the_turn_values(facebook):
  p = Position(0, 0, t=350, n=2)
  dec = facebook.decision(p)
  assert dec.best == "bank" and dec.bank > dec.roll
  assert facebook.win_probability(p) == max(dec.bank, dec.roll)
  # Banking 350 from 0-0 hands the opponent the key (0, 350, 0, 0).
  opp = facebook.win_probability(Position(0, 350))
  assert dec.bank == pytest.approx(1 - opp, abs=1e-15)


def test_start_of_turn_value_is_the_solved_value(facebook):
  assert facebook.win_probability(Position(0, 0)) == pytest.approx(
      facebook.first_player_win(), rel=1e-9)
  assert facebook.first_player_win() == pytest.approx(
      PUBLISHED["facebook"]["first_player_win"], abs=5e-7)


def test_choices_match_an_independent_scorer(facebook):
  rng = np.random.default_rng(3)
  reach = queries.reachable(facebook.layout, facebook.run.roll,
                            facebook.layout.index_of(0))
  for n in range(1, 7):
    t = 50 * int(np.flatnonzero(reach[:, n - 1])[0])
    for _ in range(12):
      roll = tuple(int(x) for x in rng.integers(1, 7, n))
      adv = facebook.advise(Position(0, 0, t=t, n=n), roll)
      best_per_k = {}
      for c in adv.choices:
        k = len(c.kept)
        best_per_k[k] = max(best_per_k.get(k, 0), c.points)
        kept = list(c.kept)
        assert all(kept.count(f) <= roll.count(f) for f in set(kept))
      assert best_per_k == reference.roll_choices("facebook", roll), roll
      wins = [c.win for c in adv.choices]
      assert wins == sorted(wins, reverse=True)


def test_every_kept_set_is_listed_once():
  game = SolvedGame.shipped("default")
  adv = game.advise(Position(0, 0), (1, 1, 5, 5, 2, 3))
  kept = sorted(c.kept for c in adv.choices)
  # Any non-empty mix of the two 1s and the two 5s, and nothing else.
  want = sorted(tuple([5] * b + [1] * a) for a, b in
                itertools.product(range(3), range(3)) if a + b)
  assert kept == want


def test_hot_dice_roll_six_again_and_winning_choices():
  game = SolvedGame.shipped("default")
  adv = game.advise(Position(0, 0), (1, 1, 1, 5, 5, 5))
  best = adv.choices[0]
  assert best.kept == (5, 5, 5, 1, 1, 1) and best.n == 6
  assert best.points == 1500 and best.t == 1500
  near = game.advise(Position(2800, 0, t=0, n=6), (1, 1, 1, 2, 3, 4))
  assert near.choices[0].wins_now and near.choices[0].win == 1.0
  assert near.decision.best == "bank" and near.decision.roll is None


def test_farkle_hands_the_turn_over():
  game = SolvedGame.shipped("default")
  adv = game.advise(Position(0, 100, f=2, e=1, t=300, n=2), (2, 3))
  assert adv.choices == () and adv.decision is None
  w0, lay = game.run.w0, game.layout
  # Third farkle in a row: 500 off (from 0 to -500), counter back to 0.
  want = 1 - w0[lay.index_of(100), lay.index_of(-500), 1, 0]
  assert adv.farkle == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("position, roll, message", [
    (Position(0, 0), (6, 5, 3), "3 dice, but n=6"),
    (Position(0, 0), (6, 5, 3, 3, 3, 7), "faces are 1..6"),
    (Position(0, 0, t=0, n=5), None, "cannot be reached"),
    (Position(0, 0, t=50, n=6), None, "cannot be reached"),
    (Position(0, 0, t=75, n=3), None, "multiple of 50"),
    (Position(20000, 0), None, "b=20000 is not a banked score"),
    (Position(0, -3000), None, "d=-3000 is not a banked score"),
    (Position(0, 0, f=3), None, "f=3 is not a farkle count"),
    (Position(0, 0, n=7), None, "n=7"),
    (Position(9900, 0, t=300, n=5), None, "already reaches the goal"),
])
def test_illegal_input_is_refused_in_one_line(facebook, position, roll,
                                              message):
  with pytest.raises(PositionError, match=message) as err:
    if roll is None:
      facebook.decision(position)
    else:
      facebook.advise(position, roll)
  assert "\n" not in str(err.value)


def test_parse_dice():
  assert parse_dice("6,5,3") == (6, 5, 3)
  assert parse_dice("6 5 3") == (6, 5, 3)
  assert parse_dice("653") == (6, 5, 3)
  with pytest.raises(PositionError, match="faces of the dice"):
    parse_dice("six")


def test_turn_table_of_any_state(facebook):
  table = facebook.turn_table(500, 1200, 1, 0)
  assert table["rows"][0]["W"]["6"] == pytest.approx(
      facebook.win_probability(Position(500, 1200, 1, 0)), abs=1e-15)
  with pytest.raises(PositionError, match="e=5"):
    facebook.turn_table(0, 0, 0, 5)


def test_unknown_shipped_name():
  with pytest.raises(PositionError, match="facebook, default"):
    SolvedGame.shipped("zilch")
