"""The published-figure comparator's definitions on synthetic tables."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "experiments"))

import reproduce_published  # noqa: E402
from farkle_jax.game import rules as rules_lib  # noqa: E402


def _row(t, actions, unreachable=(), w=0.5):
  return {"t": t, "W": {n: w + t / 1e4 for n in actions},
          "action": dict(actions), "unreachable": list(unreachable)}


def test_threshold_ignores_unreachable_rolls():
  table = {"rows": [
      _row(300, {"3": "roll", "2": "bank"}),
      _row(350, {"3": "roll", "2": "bank"}, unreachable=[3]),
      _row(400, {"3": "bank", "2": "bank"}),
      _row(450, {"3": "bank", "2": "roll"}),  # rolling again above
  ]}
  assert reproduce_published.bank_thresholds(table) == {"3": 350, "2": 500}


def test_worked_example_options_follow_the_score_set():
  rows = [_row(t, {str(n): "roll" for n in range(6, 0, -1)})
          for t in range(0, 400, 50)]
  opts = reproduce_published.roll_options(rules_lib.facebook(),
                                          [6, 5, 3, 3, 3, 2], {"rows": rows})
  assert [(k, pts) for k, pts, _ in opts] == [(1, 50), (3, 300), (4, 350)]
  assert opts[0][2] == rows[1]["W"]["5"]


def test_a_missing_run_fails_with_one_line(tmp_path):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  out = subprocess.run(
      [sys.executable, "experiments/reproduce_published.py", "--workdir",
       str(tmp_path / "none")], cwd=root, capture_output=True, text=True,
      env=dict(os.environ))
  assert out.returncode == 1
  lines = out.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: ")
  assert str(tmp_path / "none") in lines[0]
