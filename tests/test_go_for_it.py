"""Go-for-it play: its masks, and the search checked by simulation."""

import numpy as np

from farkle_jax.game import rules
from farkle_jax.game.layout import StateLayout
from farkle_jax.strategy import catalog, go_for_it, simulation


def test_go_masks():
  layout = StateLayout(rules.minimal(goal=1000))
  masks = go_for_it.go_masks(layout, (500, 1000, 1000, 1000, 1000, 1000),
                             (1000, 1000, 1000, 1000, 1000, 800))
  b, d = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)[:2]
  expect = (b * 50 >= 500).astype(int) | ((d * 50 >= 800).astype(int) << 5)
  np.testing.assert_array_equal(masks, expect)


def test_search_improves_on_maxscore_and_simulation_confirms(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  ctx = catalog.Context(layout, roll, w0)
  opt = catalog.strategy("optimal", ctx)
  res = go_for_it.search(layout, roll, ctx.sol, opt, coarse=250, rounds=1,
                         log=lambda s: None)
  assert res.result.overall > res.baseline.overall
  # The reported rate is that of the named strategy: Monte Carlo play of it
  # (another implementation of the same game) agrees within sampling error.
  named = catalog.strategy(res.name, ctx)
  sim = simulation.simulate(named, opt, layout, roll, 200_000, seed=5)
  assert abs(sim.first - res.result.first) < 3 * sim.first_se
  assert abs(sim.second - res.result.second) < 3 * sim.second_se
