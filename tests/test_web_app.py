"""The web explorer's JSON API: answers, and a 4xx with one line for every
request it cannot answer."""

import pytest
from starlette.testclient import TestClient

from farkle_jax.apps import web_app
from farkle_jax.strategy.solved_game import Position, SolvedGame


@pytest.fixture(scope="module")
def game():
  return SolvedGame.shipped("default")


@pytest.fixture(scope="module")
def client(game):
  return TestClient(web_app.create_app(game), base_url="http://localhost")


def test_info_table_and_advice_are_the_solved_values(client, game):
  info = client.get("/api/info").json()
  assert info["goal"] == 3000 and info["farkle_counts"] == 3
  assert info["first_player_win"] == game.first_player_win()
  table = client.get("/api/table?b=500&d=1000&f=1").json()
  assert table["rows"][0]["W"]["6"] == pytest.approx(
      game.win_probability(Position(500, 1000, 1)), abs=1e-15)
  adv = client.get("/api/advice?b=0&d=0&roll=6,5,3,3,3,2").json()
  assert adv == game.advise(Position(0, 0), (6, 5, 3, 3, 3, 2)).as_dict()
  dec = client.get("/api/advice?b=0&d=0&t=400&n=4").json()["decision"]
  assert dec == game.decision(Position(0, 0, t=400, n=4)).as_dict()


def test_page_and_assets(client):
  page = client.get("/")
  assert page.status_code == 200 and "farkle_jax explorer" in page.text
  assert client.get("/static/app.js").status_code == 200
  assert client.get("/static/../web_app.py").status_code == 404


def test_a_game_through_the_api(client):
  g = client.post("/api/games", json={"opponent": "bank:300", "seed": 2,
                                      "first": "computer"}).json()
  assert g["phase"] == "roll" and g["log"][0] == "computer to play first"
  for _ in range(500):
    if g["phase"] == "over":
      break
    if g["phase"] == "keep":
      body = {"action": "keep", "dice": g["options"][0]["dice"]}
    elif g["phase"] == "decide":
      body = {"action": "bank"}
    else:
      body = {"action": "roll"}
    g = client.post(f"/api/games/{g['id']}", json=body).json()
  assert g["phase"] == "over" and g["winner"] in ("you", "computer")
  assert g["decisions"] > 0 and len(g["costliest"]) <= 3
  assert client.get(f"/api/games/{g['id']}").json()["phase"] == "over"
  late = client.post(f"/api/games/{g['id']}", json={"action": "roll"})
  assert late.status_code == 409 and late.json()["error"] == "the game is over"


@pytest.mark.parametrize("method, path, body, status, words", [
    ("get", "/api/table?b=0", None, 400, "d: required"),
    ("get", "/api/table?b=0&d=x", None, 400, "d='x': expected an integer"),
    ("get", "/api/table?b=10000&d=0", None, 400, "b=10000 is not a banked"),
    ("get", "/api/table?b=0&d=0&e=3", None, 400, "e=3 is not a farkle"),
    ("get", "/api/advice?b=0&d=0&roll=1,2,9,4,5,6", None, 400, "faces are"),
    ("get", "/api/advice?b=0&d=0&roll=1,2", None, 400, "2 dice, but n=6"),
    ("get", "/api/advice?b=0&d=0&t=50&n=6", None, 400, "cannot be reached"),
    ("get", "/api/advice?b=0&d=0&roll=", None, 400, "faces of the dice"),
    ("post", "/api/games", {"opponent": "genius"}, 400, "'genius' is not"),
    ("post", "/api/games", {"first": "dog"}, 400, "first='dog'"),
    ("post", "/api/games", {"seed": "x"}, 400, "seed='x'"),
    ("post", "/api/games", [1, 2], 400, "a JSON object"),
    ("get", "/api/games/abc", None, 404, "no game 'abc'"),
    ("post", "/api/games/abc", {"action": "roll"}, 404, "no game 'abc'"),
])
def test_bad_requests_get_a_4xx_and_one_line(client, method, path, body,
                                             status, words):
  r = getattr(client, method)(path, **({} if body is None else {"json": body}))
  assert r.status_code == status, r.text
  error = r.json()["error"]
  assert words in error and "\n" not in error and "Traceback" not in error


def test_moves_the_game_does_not_wait_for(client):
  g = client.post("/api/games", json={"seed": 1}).json()
  url = f"/api/games/{g['id']}"
  for body, words in (({"action": "bank"}, "waits for roll"),
                      ({"action": "fly"}, "action='fly'"),
                      ({"action": "keep", "dice": [5]}, "waits for a roll")):
    r = client.post(url, json=body)
    assert r.status_code in (400, 409) and words in r.json()["error"], r.text
  r = client.post(url, content=b"not json",
                  headers={"content-type": "application/json"})
  assert r.status_code == 400 and r.json()["error"] == "the body is not JSON"
  r = client.post(url, content=b'{"action": "roll"}')   # no content type
  assert r.status_code == 415 and "application/json" in r.json()["error"]
  assert client.get("/nowhere").status_code == 404
  assert client.delete("/api/games").status_code == 405
