"""Each player's dice chosen in the web explorer: the API refuses what it
cannot solve in one line (4xx), solves one request at a time with progress,
then serves the new run; and the page does it in a real browser."""

import importlib
import time

import pytest
from starlette.testclient import TestClient

from conftest import solved_once
from farkle_jax.apps import explorer
from farkle_jax.strategy import solved_game


@pytest.fixture(scope="module")
def kcd_run(tmp_path_factory):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.goal = 300
  return solved_once(tmp_path_factory, "kcd_300", config)


def _wait(web):
  for _ in range(600):
    status = web.get("/api/solve").json()
    if status["state"] != "running":
      return status
    time.sleep(0.1)
  raise AssertionError("the solve did not end")


def test_the_api_solves_each_players_dice_then_serves_them(kcd_run, tmp_path):
  game = solved_game.SolvedGame.load(kcd_run)
  off = TestClient(explorer.create_app(game), base_url="http://localhost")
  assert off.post("/api/solve", json={"hands": ["", "lucky"]}).status_code \
      == 403
  web = TestClient(explorer.create_app(game, solve_dir=str(tmp_path)),
                   base_url="http://localhost")
  for body, code, says in (
      ({"hands": ["lucky"]}, 400, "hands: two strings"),
      ({"hands": ["", "lucky, luky"]}, 400, "'luky' is not in the catalog"),
      ({"hands": ["", "devils_head"]}, 400, "wild face"),
      ({"hands": ["", "lucky"], "goal": 50_000}, 413, "at most 12,000,000"),
      ({"hands": ["", "lucky"], "goal": "x"}, 400, "goal='x'"),
      ({"hands": ["", "0.5/0.5"], "goal": 300}, 400, "die 1: not six"),
      ({"hands": ["", "a/b"], "goal": 300}, 400, "die 'a/b': a catalog")):
    answer = web.post("/api/solve", json=body)
    assert answer.status_code == code and says in answer.json()["error"]
    assert "\n" not in answer.json()["error"]
  first = web.post("/api/solve", json={
      "hands": ["0.3/0.1/0.1/0.1/0.3/0.1", "lucky"]})
  assert first.status_code == 202 and first.json()["state"] == "running"
  status = _wait(web)
  assert status["state"] == "done" and status["sweeps"] >= 1
  info = web.get("/api/info").json()
  assert info["rules"]["hands"] == [[[0.3, 0.1, 0.1, 0.1, 0.3, 0.1]],
                                    ["lucky"]] and info["goal"] == 300
  table = web.get("/api/table?scores=0,0&counts=1,0").json()
  assert table["dice"]["columns"][0] == "ABBBBB"
  assert abs(status["first_player_win"] - info["seat_win"][0]) < 1e-12
