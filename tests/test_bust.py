"""The chance that a turn ends in a farkle under the optimal policy
(`row_step.turn_bust`, `SolvedGame.advise`): against the plain reference
on tiny games, against turns played at random by the advice, and where
the answer is known without either."""

import collections

import numpy as np
import pytest

import reference
from farkle_jax.game import dice as dice_lib
from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import queries
from farkle_jax.strategy.solved_game import Position, SolvedGame
from configs import tiny
from test_dice import hands_game  # noqa: F401 (a fixture: dice that differ)


@pytest.fixture(scope="module")
def facebook():
  return SolvedGame.shipped("facebook")


@pytest.mark.parametrize("name", ["minimal", "facebook"])
def test_the_chances_are_the_plain_references(tiny_runs, name):
  """Every in-turn state of a few keys: the chance to bust from there and
  when rolling on, against a plain transcription of the policy over the
  reference's own solution, to 1e-12."""
  rules = tiny.get_config(name).rules
  ref_w0, _ = reference.solve(name, rules.goal, rules.floor)
  w0, layout, roll, _ = tiny_runs(name)
  turns = queries.Turns(w0, layout, roll)
  checked = 0
  for k in (0, layout.num_keys // 3, layout.num_keys // 2 + 7,
            layout.num_keys - 1):
    idx = tuple(int(i) for i in np.unravel_index(k, layout.key_shape))
    want = reference.turn_bust(name, rules.goal, rules.floor, ref_w0, idx)
    got = turns.busts(k)
    assert not want["ties"]   # no option chosen among equals
    for t in range(int(layout.t_max(idx[0])) + 1):
      for n in range(1, N_DICE + 1):
        bust, rolling = want[t * 50, n]
        assert abs(got.bust[t, n - 1] - bust) < 1e-12, (k, t, n)
        assert abs(got.roll[t, n - 1] - rolling) < 1e-12, (k, t, n)
        checked += 1
  assert checked > 100


def _play(game, p, throw, policy) -> bool:
  """Whether one turn from position `p` (before its roll) ends in a
  farkle, keeping and banking as `game.advise` says (its moves kept in
  `policy` by state and roll); `throw(n)` rolls the dice of state n."""
  t, n = p.t, p.n
  while True:
    faces = tuple(sorted(throw(n)))
    if (t, n, faces) not in policy:
      adv = game.advise(p._replace(t=t, n=n), faces, dice_state=True)
      best = adv.choices[0] if adv.choices else None
      policy[t, n, faces] = (
          "farkle" if best is None else "stop" if best.wins_now
          or adv.decision.best == "bank" else (best.t, best.n))
    move = policy[t, n, faces]
    if isinstance(move, str):
      return move == "farkle"
    t, n = move


def _agrees(game, p, throw, want: float, runs: int) -> None:
  """`runs` turns played from p farkle as often as `want`, within 4
  standard errors."""
  policy = {}
  busts = sum(_play(game, p, throw, policy) for _ in range(runs))
  error = (want * (1 - want) / runs) ** 0.5
  assert abs(busts / runs - want) < 4 * error, (p, busts / runs, want)


def test_turns_played_by_the_advice_bust_as_often_as_computed(facebook):
  """The worked example's best choice (keep a 5: t=50 with 5 dice) and
  an opening: turns played on at random by the advice farkle as often as
  the chance shown, within 4 standard errors."""
  rng = np.random.default_rng(11)
  throw = lambda n: rng.integers(1, 7, size=n).tolist()
  advice = facebook.advise(Position(0, 0), (6, 5, 3, 3, 3, 2))
  assert advice.decision.bust == advice.choices[0].bust
  _agrees(facebook, Position(0, 0, t=50, n=5), throw,
          advice.choices[0].bust, 40_000)
  p = Position(500, 1200)
  _agrees(facebook, p, throw, facebook.decision(p).bust, 40_000)


def test_dice_that_differ_bust_as_often_as_computed(hands_game):
  """Under rules.hands (the second player's hand of three kinds of dice):
  the dice states of the hand, rolled die by die."""
  game, rng = hands_game, np.random.default_rng(5)
  k = dice_lib.kinds(game.rules.hands[1])
  states = dice_lib.states(k.counts)
  first = int(game.layout.start_state(1)) - len(states)

  chances = [np.array(c, float) for c in k.chances]

  def throw(n):
    return [f"{chr(65 + i)}{rng.choice(6, p=chances[i]) + 1}"
            for i, c in enumerate(states[n - first - 1]) for _ in range(c)]

  p = game.as_given(Position(0, 50, f=1, e=0))
  _agrees(game, p, throw, game.decision(p).bust, 10_000)


def test_banking_is_no_risk_and_one_die_is_at_least_its_farkle(facebook):
  dec = facebook.decision(Position(500, 1200, t=350, n=2))
  assert dec.best == "bank" and 0 < dec.bust < 1
  adv = facebook.advise(Position(500, 1200, t=300, n=3), (5, 2, 4))
  assert adv.choices[0].t == 350 and adv.choices[0].bust == 0.0
  # One die (t=300 at the least): a 1 or a 5 rolls on with hot dice.
  lay = facebook.layout
  key = int(lay.key_index(*lay.opening_key()))
  busts = facebook.turns.busts(key).bust
  dec = facebook.decision(Position(0, 0, t=300, n=1))
  assert dec.bust >= 2 / 3 and busts[6, 0] == (dec.best == "roll") * dec.bust
  assert dec.bust == pytest.approx(
      2 / 3 + (busts[8, 5] + busts[7, 5]) / 6, abs=1e-15)


def test_winning_at_once_is_no_risk(tiny_runs):
  game = SolvedGame.load(tiny_runs("facebook")[3])
  adv = game.advise(Position(0, 0), (1, 1, 1, 5, 2, 2))
  assert adv.choices[0].wins_now and adv.choices[0].bust == 0.0
  data = game.advice((0, 0), roll=(1, 1, 1, 5, 2, 2))
  assert data["choices"][0]["bust"] == 0.0
  assert collections.Counter(type(c["bust"]) for c in data["choices"]) == {
      float: len(data["choices"])}


def test_the_seat_shaped_advice_gives_the_chances(facebook):
  """What the explorer's page shows: "bust" per choice, after the best
  one ("then"), and for bank or roll alone."""
  adv = facebook.advise(Position(0, 0), (6, 5, 3, 3, 3, 2))
  data = facebook.advice((0, 0), roll=(6, 5, 3, 3, 3, 2))
  assert [c["bust"] for c in data["choices"]] == [
      c.bust for c in adv.choices]
  assert data["then"]["bust"] == adv.decision.bust
  alone = facebook.advice((500, 1200), t=350, n=2)
  assert alone["bust"] == facebook.decision(
      Position(500, 1200, t=350, n=2)).bust
