"""The memorized table and how far its play departs."""

import numpy as np

from farkle_jax.game import roll_tables, rules
from farkle_jax.strategy import expected_score, memorized


def _setup():
  r = rules.minimal()
  roll = roll_tables.build(r)
  sol = expected_score.solve(r, roll)
  reach = expected_score.reachable(roll, sol.cap + 1)
  return roll, sol, reach


def test_table_reproduces_rounded_values_at_reachable_states():
  roll, sol, reach = _setup()
  table = memorized.build(sol, reach)
  est = memorized.estimate(table, sol.cap + 1)
  rounded = np.where(sol.bank, 0,
                     np.maximum(0, np.ceil(np.round(sol.gain / 50, 9)) * 50))
  np.testing.assert_array_equal(est[reach], rounded[reach])
  # Small enough to remember: a handful of breakpoints per dice count.
  assert sum(len(p) for p in table.points) < 40


def test_departures_detect_a_wrong_table():
  roll, sol, reach = _setup()
  table = memorized.build(sol, reach)
  exact = memorized.departures(sol, table, roll)
  assert exact.points_per_turn <= exact.optimum_per_turn + 1e-9
  # Bank with three dice from t = 250 on instead of 400.
  pts = list(table.points)
  pts[2] = ((150, 100), (250, 0))
  wrong = memorized.departures(sol, table._replace(points=tuple(pts)), roll)
  assert wrong.bank_departures > 0 and wrong.departures_per_turn > 0
  assert wrong.points_per_turn < exact.points_per_turn - 1e-3
