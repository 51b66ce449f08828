"""An explorer that solves dice one request after another holds a bounded
memory: its resident size reaches a plateau (what JAX compiled for each
solve, and each run past `web_runs.MAX_LOADED`, is let go). Without that,
each small solve added about 5 MB for good.

The suite solves 10 sets of dice; `-m slow` solves 50. The solves run in
a process of their own: in the suite's worker, what earlier tests left
behind moves the resident size by tens of MB either way."""

import importlib
import json
import os
import subprocess
import sys
import time

import pytest
from starlette.testclient import TestClient

from conftest import solved_once
from farkle_jax.apps import explorer


def _rss_mb() -> float:
  with open("/proc/self/status") as f:
    for line in f:
      if line.startswith("VmRSS:"):
        return int(line.split()[1]) / 1024
  raise AssertionError("no VmRSS in /proc/self/status")


def _solve(web, i: int) -> None:
  """Six dice alike of chances of their own, to 50 points: the smallest
  solve that builds tables, compiles and sweeps."""
  p = 0.1 + 0.001 * (i + 1)
  die = "/".join(f"{x:.6f}" for x in (p, *(((1 - p) / 5,) * 5)))
  answer = web.post("/api/solve", json={"hands": ["", ",".join([die] * 6)],
                                        "goal": 50})
  assert answer.status_code == 202, answer.text
  run = answer.json()["run"]
  for _ in range(2400):
    status = web.get(f"/api/solve?run={run}").json()
    if status["state"] != "running":
      break
    time.sleep(0.05)
  assert status["state"] == "done", status
  table = web.get(f"/api/table?scores=0,0&run={run}")
  assert table.status_code == 200, table.text


def _measure(main: str, solve_dir: str, solves: int) -> list:
  """Resident MB after each of `solves` solves, in this process."""
  from farkle_jax.strategy.solved_game import SolvedGame
  web = TestClient(explorer.create_app(SolvedGame.load(main),
                                       solve_dir=solve_dir),
                   base_url="http://localhost")
  rss = []
  for i in range(solves):
    _solve(web, i)
    rss.append(_rss_mb())
  assert len(web.get("/api/runs").json()["runs"]) == solves + 1
  return rss


# Ten solves in the thorough tier, fifty with the slow tests.
@pytest.mark.parametrize("solves", [
    pytest.param(10, marks=pytest.mark.thorough),
    pytest.param(50, marks=pytest.mark.slow)])
def test_resident_memory_reaches_a_plateau(tmp_path_factory, tmp_path,
                                           solves):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.goal = 300
  main = solved_once(tmp_path_factory, "kcd_300", config)
  here = os.path.dirname(os.path.abspath(__file__))
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
      here, os.path.dirname(here), os.environ.get("PYTHONPATH")])))
  done = subprocess.run(
      [sys.executable, __file__, main, str(tmp_path), str(solves)],
      capture_output=True, text=True, env=env, timeout=600, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  rss = json.loads(done.stdout.strip().splitlines()[-1])
  half = solves // 2
  growth = max(rss[half:]) - rss[half - 1]
  # The last half's growth: none but the allocator's noise (a few MB).
  assert growth < 10, [round(x, 1) for x in rss]


if __name__ == "__main__":
  print(json.dumps(_measure(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
