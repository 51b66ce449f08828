"""The runs an explorer serves side by side: at most `cap` held in memory
besides the main one, the least recently used dropped and loaded again on
demand; a game on a dropped run goes on; a game left alone expires."""

import importlib

import pytest

from conftest import solved_once
from farkle_jax.apps import web_games, web_runs
from farkle_jax.apps.web_games import BadRequest
from farkle_jax.strategy.solved_game import SolvedGame


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.goal = 300
  return solved_once(tmp_path_factory, "kcd_300", config)


def test_the_least_recently_used_run_is_dropped_and_loaded_again(folder):
  main, dropped = SolvedGame.load(folder), []
  runs = web_runs.Runs(main, on_drop=dropped.append, cap=2)
  games = {rid: SolvedGame.load(folder) for rid in "abc"}
  runs.add("a", folder, games["a"])
  runs.add("b", folder, games["b"])
  assert runs.get("a").game is games["a"]     # a is now the most recent
  runs.add("c", folder, games["c"])
  assert dropped == [games["b"]] and list(runs.loaded) == ["a", "c"]
  again = runs.get("b").game                  # loaded from its folder
  assert again is not games["b"] and again.rules == games["b"].rules
  assert dropped == [games["b"], games["a"]]
  assert runs.get(None).game is main and runs.get("main").game is main
  assert [r["run"] for r in runs.listing()] == ["main", "c", "b", "a"]
  for name in ("d", 7, ["a"]):
    with pytest.raises(BadRequest, match="no such run") as e:
      runs.get(name)
    assert e.value.status == 404


def test_a_game_outlives_its_run_in_memory_and_expires_unused(folder):
  main = SolvedGame.load(folder)
  room = None
  runs = web_runs.Runs(main, on_drop=lambda g: room.forget(g), cap=1)
  room = web_games.GameRoom(lambda run: runs.get(run).game)
  runs.add("a", folder, SolvedGame.load(folder))
  g = room.new_game({"seed": 5, "run": "a", "first": "computer"})
  assert g["run"] == "a"
  runs.add("b", folder, SolvedGame.load(folder))   # drops a
  assert room.games[g["id"]].computer is None      # holds no dropped run
  for _ in range(200):
    if g["phase"] == "over":
      break
    g = room.move(g["id"], {"action": "keep", "dice": g["options"][0]["dice"]}
                  if g["phase"] == "keep" else {"action": "roll"})
  assert g["phase"] == "over" and g["run"] == "a"
  room.idle = 0.0
  with pytest.raises(BadRequest, match="left alone") as e:
    room.show(g["id"])
  assert e.value.status == 404 and not room.games
