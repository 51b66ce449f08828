"""Reachability of in-turn states and turn-table formatting."""

import json
import os

from farkle_jax.solver import queries
from farkle_jax.game import rules as rules_lib
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))


def test_opening_turn_unreachable_states_match_published():
  rules = rules_lib.facebook()
  layout = StateLayout(rules)
  reach = queries.reachable(layout, roll_tables.build(rules), layout.index_of(0))
  for row in PUBLISHED["facebook"]["opening_turn_slice"]["rows"]:
    t = row["t"] // 50
    unreachable = [n for n in range(6, 0, -1) if not reach[t, n - 1]]
    assert unreachable == row["unreachable"], row["t"]


def test_format_marks_bank_and_unreachable():
  table = {"b": 0, "d": 0, "f": 0, "e": 0, "rows": [
      {"t": 0, "W": {str(n): 0.5 for n in range(6, 0, -1)},
       "action": {str(n): "roll" for n in range(6, 0, -1)},
       "unreachable": [5, 4, 3, 2, 1]},
      {"t": 300, "W": {str(n): 0.25 for n in range(6, 0, -1)},
       "action": {str(n): "bank" for n in range(6, 0, -1)},
       "unreachable": []}]}
  text = queries.format_table(table)
  lines = text.splitlines()
  assert lines[2].split() == ["0", "0.500000", "-", "-", "-", "-", "-"]
  assert lines[3].split() == ["300"] + ["0.250000B"] * 6
  assert json.loads(queries.to_json(table)) == table
