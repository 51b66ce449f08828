"""Each player's dice chosen in the web explorer: the API refuses what it
cannot solve in one line (4xx), solves one request at a time (another gets
a 429 with Retry-After) with progress from its first second, then serves
the new run beside the main one without changing what others see; no
response names a path, a process or a host."""

import importlib
import os
import socket
import time

import pytest
from starlette.testclient import TestClient

from conftest import solved_once
from farkle_jax.apps import explorer, web_runs
from farkle_jax.solver import locking
from farkle_jax.strategy import solved_game


@pytest.fixture(scope="module")
def kcd_run(tmp_path_factory):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.goal = 300
  return solved_once(tmp_path_factory, "kcd_300", config)


@pytest.fixture(scope="module")
def kcd_game(kcd_run):
  return solved_game.SolvedGame.load(kcd_run)


def _wait(web, run, seen=None):
  for _ in range(1200):
    status = web.get(f"/api/solve?run={run}").json()
    if seen is not None:
      seen.append(status)
    if status["state"] != "running":
      return status
    time.sleep(0.05)
  raise AssertionError("the solve did not end")


def test_refusals_are_one_line(kcd_game, tmp_path):
  off = TestClient(explorer.create_app(kcd_game), base_url="http://localhost")
  assert off.post("/api/solve", json={"hands": ["", "lucky"]}).status_code \
      == 403
  web = TestClient(explorer.create_app(kcd_game, solve_dir=str(tmp_path)),
                   base_url="http://localhost")
  for body, code, says in (
      ({"hands": ["lucky"]}, 400, "hands: two strings"),
      ({"hands": ["", "lucky, luky"]}, 400, "'luky' is not in the catalog"),
      ({"hands": ["", "lucky"], "goal": 50_000}, 413, "at most 12,000,000"),
      ({"hands": ["", "lucky"], "goal": "x"}, 400, "goal='x'"),
      ({"hands": ["", "0.5/0.5"], "goal": 300}, 400, "die 1: not six"),
      ({"hands": ["", "a/b"], "goal": 300}, 400, "die 'a/b': a catalog")):
    answer = web.post("/api/solve", json=body)
    assert answer.status_code == code and says in answer.json()["error"]
    assert "\n" not in answer.json()["error"]
  assert web.get("/api/solve").json() == {"state": "idle"}
  assert web.get("/api/solve?run=0123456789abcdef").status_code == 404
  assert web.get("/api/table?scores=0,0&run=0123456789abcdef"
                 ).status_code == 404


def test_a_solve_is_served_beside_the_main_run(kcd_game, tmp_path):
  """The solved run answers the requests that name it; the main run, and
  a game begun on it, are as they were."""
  web = TestClient(explorer.create_app(kcd_game, solve_dir=str(tmp_path)),
                   base_url="http://localhost")
  before = web.get("/api/info").json()
  game = web.post("/api/games", json={"seed": 4}).json()
  first = web.post("/api/solve", json={
      "hands": ["0.3/0.1/0.1/0.1/0.3/0.1", "lucky"]})
  assert first.status_code == 202 and first.json()["state"] == "running"
  run = first.json()["run"]
  assert len(run) == 16 and int(run, 16) >= 0
  status = _wait(web, run)
  assert status["state"] == "done" and status["sweeps"] >= 1, status
  assert web.get("/api/info").json() == before   # nobody else's changed
  assert web.get(f"/api/games/{game['id']}").json() == game
  info = web.get(f"/api/info?run={run}").json()
  assert info["rules"]["hands"] == [[[0.3, 0.1, 0.1, 0.1, 0.3, 0.1]],
                                    ["lucky"]] and info["goal"] == 300
  assert info["run"] == run and info["source"] == f"run {run}"
  assert abs(status["first_player_win"] - info["seat_win"][0]) < 1e-12
  table = web.get(f"/api/table?scores=0,0&counts=1,0&run={run}").json()
  assert table["dice"]["columns"][0] == "ABBBBB"
  assert "dice" not in web.get("/api/table?scores=0,0").json()
  mine = web.post("/api/games", json={"seed": 4, "run": run}).json()
  assert mine["run"] == run and mine["left"] != game["left"]
  runs = web.get("/api/runs").json()["runs"]
  assert [r["run"] for r in runs] == ["main", run]
  assert runs[1]["hands"] == info["rules"]["hands"]
  again = web.post("/api/solve", json={       # the same dice: loaded
      "hands": ["0.3/0.1/0.1/0.1/0.3/0.1", "lucky"]})
  assert again.json()["run"] == run
  assert _wait(web, run)["state"] == "done"


def test_one_solve_at_a_time_with_progress_from_the_first_second(
    kcd_game, tmp_path):
  web = TestClient(explorer.create_app(kcd_game, solve_dir=str(tmp_path)),
                   base_url="http://localhost")
  first = web.post("/api/solve", json={"hands": ["", "lucky, ci"],
                                       "goal": 300}).json()
  other = web.post("/api/solve", json={"hands": ["odd", ""], "goal": 300})
  assert other.status_code == 429, other.text
  wait = other.headers["Retry-After"]
  assert wait.isdigit() and 1 <= int(wait) <= 600
  assert f"try again in {wait} s" in other.json()["error"]
  same = web.post("/api/solve", json={"hands": ["", "lucky, ci"],
                                      "goal": 300})
  assert same.status_code == 202 and same.json()["run"] == first["run"]
  seen = [first]
  assert _wait(web, first["run"], seen)["state"] == "done"
  phases = [s["phase"] for s in seen]
  assert phases[-1] == "done" and "building tables" in phases, phases
  building = [s for s in seen if s["phase"] == "building tables"]
  assert all(s["sweeps"] == 0 and s["eta"] == "?" for s in building)
  # The clock runs from the start, before any sweep has reported.
  assert building[-1]["elapsed"] > building[0]["elapsed"] >= 0
  later = web.post("/api/solve", json={"hands": ["odd", ""], "goal": 300})
  assert later.status_code == 202


def test_no_response_names_a_path_a_process_or_a_host(kcd_game, tmp_path):
  """Every answer of the Dice tab's flow, a failed solve's line included
  (here the run's folder is locked by another solve: the solver's message
  names the folder, the pid and the host that hold it)."""
  web = TestClient(explorer.create_app(kcd_game, solve_dir=str(tmp_path)),
                   base_url="http://localhost")
  hands = ["", "0.2/0.16/0.16/0.16/0.16/0.16"]
  answers = [web.get("/api/info"), web.get("/api/solve")]
  start = web.post("/api/solve", json={"hands": hands, "goal": 200})
  answers.append(start)
  run = start.json()["run"]
  assert _wait(web, run)["state"] == "done"
  answers += [web.get(f"/api/solve?run={run}"),
              web.get(f"/api/info?run={run}"), web.get("/api/runs")]
  locked = ["", "0.25/0.15/0.15/0.15/0.15/0.15"]
  blocker = _lock_the_next(web, tmp_path, locked)
  try:
    failed = web.post("/api/solve", json={"hands": locked, "goal": 200})
    answers.append(failed)
    status = _wait(web, failed.json()["run"])
    answers.append(web.get(f"/api/solve?run={failed.json()['run']}"))
  finally:
    blocker.__exit__(None, None, None)
  assert status["state"] == "failed" and "in use by another solve" in \
      status["error"], status
  secrets = (str(tmp_path), os.path.realpath(tmp_path), str(os.getpid()),
             socket.gethostname())
  for answer in answers:
    for secret in secrets:
      assert secret not in answer.text, (secret, answer.text)


def _rules(web, run):
  from farkle_jax.game import rules as rules_lib
  return rules_lib.from_mapping(web.get(f"/api/info?run={run}")
                                .json()["rules"])


def _lock_the_next(web, tmp_path, hands):
  """Holds the lock of the folder a solve of `hands` (goal 200) would use,
  as another solve would."""
  from farkle_jax.apps import dice_solves
  solves = dice_solves.Solves(_rules(web, "main"), str(tmp_path), None)
  _, rules = solves._config({"hands": hands, "goal": 200})
  folder = os.path.join(tmp_path, f"hands_{web_runs.run_id(rules)}")
  os.makedirs(folder)
  lock = locking.WorkdirLock(folder)
  lock.__enter__()
  return lock
