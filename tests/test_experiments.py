"""The experiments' computations on tiny games (not their full runs)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from farkle_jax import bellman, queries, solve
from configs import tiny

sys.path.insert(0, os.path.join(ROOT, "experiments"))

import goal_preference  # noqa: E402
import iterations  # noqa: E402
import score_floor  # noqa: E402
import where_to_roll  # noqa: E402


def test_corner_max():
  x = np.array([[1, 0, 0], [0, 5, 0], [0, 0, 2]])
  m = score_floor.corner_max(x)
  assert m[0, 0] == 5 and m[1, 1] == 5 and m[2, 2] == 2 and m[0, 2] == 2


def test_identical_region_and_decay_on_synthetic_data():
  scores = np.arange(0, 500, 50)
  dev = np.zeros((10, 10, 3, 3))
  diffs = np.zeros((10, 10, 3, 3), int)
  for i in range(10):
    dev[i, i] = 10.0 ** -i
  diffs[3, 4, 2, 0] = 1   # only with a farkle count of 2
  diffs[1, 1, 0, 0] = 1
  region = score_floor.identical_region(scores, dev, diffs)
  assert region[0] == (100, 0.01)
  assert region[2] == (200, 1e-4)
  curve = score_floor.deviation_by_b(scores, dev)
  assert curve[2] == (100, 0.01)
  assert score_floor.decay_per_500(curve) == pytest.approx(1e10)


@pytest.fixture(scope="module")
def two_floors(tmp_path_factory):
  runs = []
  for floor in (-500, -1000):
    cfg = tiny.get_config("facebook")
    cfg.rules.floor = floor
    path = str(tmp_path_factory.mktemp(f"L{-floor}"))
    solve.run(cfg, path)
    runs.append(solve.load(path)[:3])
  return runs


def test_compare_run_with_itself(two_floors):
  scores, dev, diffs = score_floor.compare_runs(two_floors[0],
                                                two_floors[0])
  assert dev.max() == 0 and diffs.max() == 0
  region = score_floor.identical_region(scores, dev, diffs)
  assert region[2] == (-500, 0.0)


def test_deviation_by_b_matches_direct_computation(two_floors):
  (wa, la, roll), (wb, lb, _) = two_floors
  scores, dev, _ = score_floor.compare_runs(two_floors[0], two_floors[1])
  curve = dict(score_floor.deviation_by_b(scores, dev))
  assert curve[-500] > curve[0] > curve[500] > 0
  B = 500
  keys_a, keys_b = [], []
  for b in range(B, 1000, 50):
    for d in range(B, 1000, 50):
      for f in range(3):
        for e in range(3):
          keys_a.append(la.key_index(la.index_of(b), la.index_of(d), f, e))
          keys_b.append(lb.key_index(lb.index_of(b), lb.index_of(d), f, e))
  ra = bellman.turn_values(wa, np.array(keys_a), la, roll)
  rb = bellman.turn_values(wb, np.array(keys_b), lb, roll)
  T = min(ra.shape[0], rb.shape[0]) - 1
  ra, rb = ra[:T], rb[:T]
  bs = np.array([la.index_of(b) for b in range(B, 1000, 50)
                 for _ in range(B, 1000, 50) for _ in range(9)])
  live = np.arange(T)[:, None] <= la.t_max(bs)[None]
  rel = 2 * np.abs(ra - rb) / (ra + rb)
  worst = np.where(live[:, None], rel, 0).max()
  assert curve[B] == pytest.approx(worst, rel=1e-12)


def test_discrepancies():
  states = [(50, 5, 0.50, 300.0), (100, 4, 0.49, 310.0),
            (150, 3, 0.52, 320.0), (200, 2, 0.52, 330.0)]
  pairs = goal_preference.discrepancies(states)
  assert pairs == [((50, 5, 0.50, 300.0), (100, 4, 0.49, 310.0))]


def test_opening_states_and_where_to_roll(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  states = goal_preference.opening_states(w0, layout, roll, 500)
  assert all(0 < t <= 500 for t, *_ in states)
  assert (50, 5) in [(t, n) for t, n, *_ in states]
  assert (50, 6) not in [(t, n) for t, n, *_ in states]
  first, again = where_to_roll.thresholds(w0, layout, roll)
  table = queries.turn_table(w0, layout, roll, 0, 0, 0, 0)
  for n in range(1, 7):
    banks = [r["t"] for r in table["rows"]
             if r["action"].get(str(n)) == "bank" and r["t"] >= 50]
    assert first[0, 0, n - 1] == (min(banks) if banks else -1)


def test_iterations_rows_from_a_traced_solve(tiny_runs):
  _, _, _, workdir = tiny_runs("minimal")
  with open(os.path.join(workdir, "summary.json")) as f:
    summary = json.load(f)
  rows = iterations.rows_of("ordered", summary)
  assert len(rows) == summary["iterations"]
  assert rows[-1]["first_player_win"] == pytest.approx(
      summary["first_player_win"], abs=1e-15)
  assert iterations.sweeps_to(rows, summary["tol"]) == summary["iterations"]


def test_where_to_roll_script_writes_its_outputs(tmp_path):
  out = subprocess.run(
      [sys.executable, "experiments/where_to_roll.py", "--config",
       "configs/tiny.py:minimal", "--workdir", str(tmp_path)], cwd=ROOT,
      capture_output=True, text=True,
      env={**os.environ, "JAX_PLATFORMS": "cpu"})
  assert out.returncode == 0, out.stderr[-2000:]
  for name in ("where_to_roll.csv", "where_to_roll.png", "where_to_roll.md"):
    assert os.path.getsize(tmp_path / name) > 0
