"""The plain reference for three or more players (tests/reference.py), the
ground truth of the N-player model: it reduces to the two-player reference,
its vectors are probability distributions, and play by its strategy wins
as often as it says."""

import numpy as np
import pytest

import reference


def test_two_players_reduce_to_the_two_player_reference():
  w, _ = reference.solve_players(2, 500)
  ref, _ = reference.solve("minimal", 500, 0)
  np.testing.assert_allclose(w[..., 0], ref[..., 0, 0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("players", [3, 4])
def test_every_state_is_a_distribution_over_the_winner(players):
  w, V = reference.solve_players(players, 300)
  assert np.abs(w.sum(-1) - 1).max() < 1e-12 and w.min() >= 0
  for rows in V.values():
    for v in rows:
      assert np.abs(v.sum(-1) - 1).max() < 1e-12


def test_three_players_monte_carlo():
  w, V = reference.solve_players(3, 500)
  rng = np.random.default_rng(0)
  dists = {n: reference.distribution("minimal", n) for n in range(1, 7)}
  sets = {n: list(d[1].items()) for n, d in dists.items()}
  cum = {n: np.cumsum([float(dists[n][0])] + [float(p) for _, p in sets[n]])
         for n in range(1, 7)}
  nb = 10
  games, wins = 6000, np.zeros(3)

  def value(scores, t, n):
    return np.ones(1) if t >= len(V) else V[t][n - 1][scores]

  for _ in range(games):
    scores, mover = [0, 0, 0], 0
    while True:
      order = tuple(scores[(mover + i) % 3] for i in range(3))
      t, n = 0, 6
      while True:
        r = int(np.searchsorted(cum[n], rng.random() * cum[n][-1], "right"))
        if r == 0:
          t = -1                                   # farkle
          break
        sset = sets[n][min(r, len(sets[n])) - 1][0]
        opts = [(t + pts // 50, 6 if k == n else n - k) for k, pts in sset]
        vals = [1.0 if order[0] + a >= nb else value(order, a, b)[0]
                for a, b in opts]
        t, n = opts[int(np.argmax(vals))]
        if order[0] + t >= nb:
          break                                    # banks and wins
        nxt = order[1:] + (order[0] + t,)
        bank = np.roll(w[nxt], 1)[0]
        if bank >= value(order, t, n)[0]:
          break
      if t > 0 and order[0] + t >= nb:
        wins[mover] += 1
        break
      if t > 0:
        scores[mover] += t
      mover = (mover + 1) % 3
  rate = wins / games
  se = np.sqrt(w[0, 0, 0] * (1 - w[0, 0, 0]) / games)
  for seat in range(3):
    assert abs(rate[seat] - w[0, 0, 0][seat]) < 3 * se[seat], (
        rate, w[0, 0, 0])


def test_a_penalty_for_two_players_reduces_to_the_two_player_reference():
  """The facebook rules (bank minimum, three farkles cost 500, a floor):
  the N-player reference with two players is the two-player one."""
  w, _ = reference.solve_players_penalty(2, 300, -150)
  ref, _ = reference.solve("facebook", 300, -150)
  np.testing.assert_allclose(w[..., 0], ref, rtol=0, atol=1e-12)
  assert np.abs(w.sum(-1) - 1).max() < 1e-12 and w.min() >= 0
