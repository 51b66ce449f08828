"""The published Facebook figures, solved from configs/facebook.py.

Slow (about 14 minutes on 2 CPU cores), so skipped by default; run it with

  python -m pytest -q -m slow
"""

import json
import os

import pytest

from configs import facebook
from farkle_jax.solver import driver, queries, results

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))["facebook"]
# Published values are printed to 6 decimals: half a unit of rounding plus
# the solve tolerance's share.
TABLE_TOL = 6e-7


@pytest.mark.slow
def test_facebook_first_player_win_and_opening_table(tmp_path):
  summary = driver.run(facebook.get_config(), str(tmp_path))
  assert summary["converged"]
  assert summary["model_states"] == PUBLISHED["state_count"]
  # Published to 5 decimals.
  assert abs(summary["first_player_win"] - PUBLISHED["first_player_win"]) \
      <= 5e-6
  w0, layout, roll, _ = results.load(str(tmp_path))
  published = PUBLISHED["opening_turn_slice"]["rows"]
  table = queries.turn_table(w0, layout, roll, 0, 0, 0, 0,
                             t_max=published[-1]["t"])
  ours = {row["t"]: row for row in table["rows"]}
  worst = 0.0
  for row in published:
    mine = ours[row["t"]]
    assert mine["unreachable"] == row["unreachable"], row["t"]
    for n, w in row["W"].items():
      if int(n) not in row["unreachable"]:
        worst = max(worst, abs(mine["W"][n] - w))
  assert worst <= TABLE_TOL
  # Bank thresholds of the opening turn: the first reachable t that banks.
  for n, threshold in PUBLISHED["opening_turn_bank_thresholds_by_n"].items():
    banks = [r["t"] for r in table["rows"] if r["action"][n] == "bank"
             and int(n) not in r["unreachable"]]
    assert min(banks) == threshold, n
