"""The N-player state layout: key numbering and the transitions that end
a turn, checked against their definitions key by key."""

import dataclasses

import numpy as np
import pytest

from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout


def _seats(players, penalty):
  rules = (rules_lib.facebook(floor=-300, goal=600) if penalty
           else rules_lib.minimal(goal=600))
  return SeatsLayout(rules.replace(players=players))


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("penalty", [False, True])
def test_transitions_rotate_the_seats(players, penalty):
  seats = _seats(players, penalty)
  fields = seats.key_fields()
  assert np.array_equal(seats.key_index(fields), np.arange(seats.num_keys))
  s, f = np.stack(fields[:players]), np.stack(fields[players:])
  # A bank of t from every key whose mover stays below the goal.
  t = 3
  ok = s[0] + t < seats.num_scores
  bank = seats.bank_base(fields) + t * seats.score_stride
  want = seats.key_index(tuple(s[1:]) + (s[0] + t * ok,) + tuple(f[1:])
                         + (np.zeros_like(f[0]),))
  assert np.array_equal(bank[ok], want[ok])
  # A farkle: the count rises, the penalty on the last one.
  nxt = np.stack(seats.farkle_fields(fields))
  last = f[0] == seats.num_farkle - 1
  lost = np.where(last & penalty, np.maximum(0, s[0] - seats.penalty), s[0])
  assert np.array_equal(nxt[players - 1], lost)
  assert np.array_equal(nxt[:players - 1], s[1:])
  assert np.array_equal(nxt[players:-1], f[1:])
  assert np.array_equal(nxt[-1], (f[0] + 1) % seats.num_farkle)


@pytest.mark.parametrize("penalty", [False, True])
def test_the_stage_order_makes_reads_final(penalty):
  """A bank leads to an earlier stage; a farkle to the same stage only
  without a penalty, and otherwise to an earlier one unless it costs the
  penalty."""
  seats = _seats(3, penalty)
  fields = seats.key_fields()
  stage = seats.stage(fields)
  np.testing.assert_array_equal(np.bincount(stage), seats.stage_sizes())
  s0 = fields[0]
  for t in range(seats.bank_min, seats.bank_min + 4):
    ok = s0 + t < seats.num_scores
    target = seats.bank_base(fields) + t * seats.score_stride
    assert (stage[target[ok]] < stage[ok]).all()
  target = seats.key_index(seats.farkle_fields(fields))
  if not penalty:
    assert np.array_equal(stage[target], stage)
  else:
    paid = fields[3] == seats.num_farkle - 1
    assert (stage[target[~paid]] < stage[~paid]).all()
    assert (stage[target[paid]] > stage[paid]).all()


@pytest.mark.parametrize("players", [2, 3])
def test_players_off_the_board_have_scores_of_their_own(players):
  """An entry minimum under a penalty (docs/model.md §8): each seat's
  score index says whether its player is on the board; the scores off it
  are 0 and what penalties leave of it, -300 here (the floor)."""
  seats = SeatsLayout(rules_lib.facebook(floor=-300, goal=600).replace(
      entry_minimum=500, players=players))
  score = [-300, 0] + list(range(-300, 600, 50))   # in points, by index
  board = [False, False] + [True] * 18
  assert seats.num_scores == len(score) == 20
  assert [int(seats.points(i)) for i in range(20)] == score
  assert seats.index_of(0) == 1 and seats.index_of(-300) == 2
  assert seats.index_of(0, on_board=True) == 8
  fields = seats.key_fields()
  s, f = np.stack(fields[:players]), np.stack(fields[players:])
  on = np.asarray(board)[s[0]]
  mover = np.asarray(score)[s[0]]
  assert np.array_equal(seats.bank_floor(s[0]) * 50, np.where(on, 300, 500))
  # A bank of t: the banker's score plus t, on the board.
  t = 3
  reach = (mover + 50 * t + 300) // 50 + 2
  ok = reach < seats.num_scores
  want = seats.key_index(tuple(s[1:]) + (np.where(ok, reach, 0),)
                         + tuple(f[1:]) + (np.zeros_like(f[0]),))
  bank = seats.bank_base(fields) + t * seats.score_stride
  assert np.array_equal(bank[ok], want[ok])
  # The third farkle: 500 less, not below -300, on or off the board.
  paid = f[0] == seats.num_farkle - 1
  lost = np.maximum(-300, mover - 500)
  index = np.where(on, (lost + 300) // 50 + 2, np.where(lost < 0, 0, 1))
  nxt = np.stack(seats.farkle_fields(fields))
  assert np.array_equal(nxt[players - 1], np.where(paid, index, s[0]))
  # Every bank is read from a stage solved earlier in the sweep.
  stage = seats.stage(fields)
  for t in range(seats.bank_min, seats.bank_min + 4):
    target = seats.bank_base(fields) + t * seats.score_stride
    ok = (mover + 50 * t + 300) // 50 + 2 < seats.num_scores
    assert (stage[target[ok]] < stage[ok]).all()


@pytest.mark.parametrize("rules", [
    rules_lib.facebook(floor=-300, goal=600).replace(players=3),
    rules_lib.facebook(floor=-150, goal=400).replace(players=3,
                                                     entry_minimum=350),
    rules_lib.minimal(goal=300).replace(players=3,
                                        hands=((), ((0.3,) + (0.14,) * 5,),
                                               ()))],
    ids=["penalty", "entry-minimum", "hands"])
def test_bank_targets_line_up_with_the_banker(rules):
  """`bank_targets` puts the value of `after_bank` of every banker and
  reached score where the banker's key and that score index it, under a
  penalty (the count starts again), with players off the board and with
  each player's own hand (kept)."""
  seats = SeatsLayout(rules)
  values = np.random.default_rng(0).uniform(
      size=seats.key_shape + (seats.players,))
  out = seats.bank_targets(values)
  fields = seats.key_fields()
  for t in (0, 2, 5):
    x = np.asarray(seats.on_board(fields[0])) + t
    ok = x < seats.num_scores
    after = seats.after_bank(fields, t)
    want = values.reshape(-1, seats.players)[seats.key_index(
        tuple(np.asarray(a)[ok] for a in after))]
    c = (np.asarray(fields[seats.players])[ok] if rules.hands
         else np.zeros(ok.sum(), int))
    got = out[(x[ok],) + tuple(np.asarray(a)[ok] for a in fields[1:
              seats.players]) + (c,) + tuple(
                  np.asarray(a)[ok] for a in fields[seats.players + 1:])]
    np.testing.assert_array_equal(got, want)


def test_from_next_rotates_back_one_seat():
  seats = _seats(3, False)
  np.testing.assert_array_equal(seats.from_next(np.array([0.5, 0.3, 0.2])),
                                [0.2, 0.5, 0.3])


def test_rules_refuse_bad_player_counts():
  with pytest.raises(rules_lib.RulesError, match="rules.players = 7"):
    rules_lib.minimal().replace(players=7)
  rules_lib.minimal().replace(players=3, final_round=True,
                              final_round_ties="shared")
  assert "players" not in rules_lib.minimal().to_dict()   # fingerprints


def test_raised_to_a_sum_is_raised_key_and_runs_in_jax():
  """`raised_to` (the N-player wavefront's first-sweep guesses, in a
  compiled step) raises scores as `raised_key` does, given its sum, and
  leaves a key where the scores cannot take it all; NumPy and JAX agree."""
  import jax.numpy as jnp
  seats = SeatsLayout(dataclasses.replace(
      rules_lib.facebook(goal=600, floor=-300), players=3))
  fields, keys = seats.key_fields(), np.arange(seats.num_keys)
  n, top = seats.players, seats.num_scores - 1
  have = sum(np.asarray(x) for x in seats.scores_of(fields))
  need = have + (n * top - have) % seats.bank_min + 1
  want = seats.raised_key(fields, fields)
  got = seats.raised_to(keys, need)
  np.testing.assert_array_equal(got, np.where(want >= 0, want, keys))
  assert (want < 0).any() and (want > keys).any()
  np.testing.assert_array_equal(
      np.asarray(seats.raised_to(jnp.asarray(keys), jnp.asarray(need), jnp)),
      got)
