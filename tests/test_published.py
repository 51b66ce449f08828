"""The published Facebook figures, solved from configs/facebook.py.

Slow (minutes: the README's "How long things take"), so skipped by
default; run it with

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


def check_published(workdir: str) -> None:
  """Asserts that the finished run in `workdir` has the published figures."""
  w0, layout, roll, summary = results.load(workdir)
  assert summary["converged"]
  assert summary["model_states"] == PUBLISHED["state_count"]
  # Published to 5 decimals.
  assert abs(summary["first_player_win"] - PUBLISHED["first_player_win"]) \
      <= 5e-6
  published = PUBLISHED["opening_turn_slice"]["rows"]
  table = queries.turn_table(w0, layout, roll, 0, 0, 0, 0,
                             t_max=published[-1]["t"])
  ours = {row["t"]: row for row in table["rows"]}
  assert len(published) == len(ours)
  for row in published:
    mine = ours[row["t"]]
    assert mine["unreachable"] == row["unreachable"], row["t"]
    for n, w in row["W"].items():
      assert abs(mine["W"][n] - w) <= TABLE_TOL, (row["t"], n)
  # Bank thresholds of the opening turn: banking is optimal in every
  # reachable state of n dice from the threshold on, and rolling just below.
  for n, threshold in PUBLISHED["opening_turn_bank_thresholds_by_n"].items():
    rolls = [r["t"] for r in table["rows"] if r["action"][n] == "roll"
             and int(n) not in r["unreachable"]]
    assert max(rolls) + layout.unit == threshold, n


@pytest.mark.slow
def test_facebook_first_player_win_and_opening_table(tmp_path):
  driver.run(facebook.get_config(), str(tmp_path))
  check_published(str(tmp_path))
