"""The final round's last turns of N players (`solver.last_turns`) against
the two-player chaser table and the plain reference's own recursion."""

import itertools

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, last_turns


def _table(rules):
  seats = SeatsLayout(rules)
  roll = bellman.roll_arrays(roll_tables.build(rules))
  return seats, last_turns.final_values(seats, roll)


@pytest.mark.parametrize("ties", ["leader", "shared"])
@pytest.mark.parametrize("rules", [
    rules_lib.minimal(goal=1000),
    rules_lib.facebook(goal=1500, floor=-500)])
def test_two_players_give_the_chaser_table(rules, ties):
  """With one chaser the pass over running totals is the two-player
  "reach at least m units" table (`final_round.reach_table`, its own
  recursion over m), bank floors, the cap and shared ties (half a win)
  included."""
  rules = rules.replace(final_round=True, final_round_cap=600,
                        final_round_ties=ties)
  seats, final = _table(rules)
  two = StateLayout(rules).past_goal_values()          # [B, padding]
  P, B = seats.past_goal, seats.num_scores
  chaser = final[:, 1].reshape(P, B)
  np.testing.assert_allclose(chaser, two[:, :P].T, rtol=0, atol=1e-14)
  np.testing.assert_allclose(final.sum(1), 1, rtol=0, atol=1e-14)


@pytest.mark.parametrize("players, goal, cap, ties", [
    (3, 300, 200, "leader"), (4, 250, 100, "leader"),
    (3, 300, 200, "shared"), (4, 250, 100, "shared")])
def test_every_seat_agrees_with_the_reference(players, goal, cap, ties):
  """Every bar, every score of the chasers, every seat's chance, against
  the reference's recursion over (chaser, running total, dice); with
  shared ties the reference follows the set of seats tied at the bar."""
  rules = rules_lib.minimal(goal=goal).replace(
      players=players, final_round=True, final_round_cap=cap,
      final_round_ties=ties)
  seats, final = _table(rules)
  B, P = seats.num_scores, seats.past_goal
  final = final.reshape((P,) + (B,) * (players - 1) + (players,))
  for bar in range(P):
    for scores in itertools.product(range(B), repeat=players - 1):
      chasers = tuple((i + 1, 50 * s) for i, s in enumerate(scores))
      want = reference.final_round_players(players, goal, cap, chasers,
                                           goal + 50 * bar, 0, ties=ties)
      np.testing.assert_allclose(final[(bar,) + scores], want, rtol=0,
                                 atol=1e-14, err_msg=f"{bar} {scores}")
  assert np.abs(final.sum(-1) - 1).max() < 1e-14
  if ties == "shared":   # ties change what some chasers do
    _, leader = _table(rules.replace(final_round_ties="leader"))
    assert np.abs(final - leader.reshape(final.shape)).max() > 1e-5
  # A later seat must pass the earlier ones too: at equal scores the
  # first chaser has the better chance.
  even = final[(0,) + (0,) * (players - 1)]
  assert all(even[i] > even[i + 1] for i in range(1, players - 1))


def test_the_footprint_counts_the_tables():
  rules = rules_lib.minimal(goal=1000).replace(players=3, final_round=True)
  seats = SeatsLayout(rules)
  P, B = seats.past_goal, seats.num_scores
  assert last_turns.footprint(seats) > 2 * P * B * B * 3 * 8
  assert last_turns.footprint(SeatsLayout(rules.replace(
      final_round=False))) == 0
