"""The web explorer's JSON API, for two players and for three: the solved
values, a game against the computer, and a 4xx with one line for every
request it cannot answer."""

import pytest
from starlette.testclient import TestClient

from farkle_jax.apps import explorer
from farkle_jax.strategy.seat_game import SeatGame
from farkle_jax.strategy.solved_game import Position, SolvedGame


@pytest.fixture(scope="module")
def game():
  return SolvedGame.shipped("default")


@pytest.fixture(scope="module")
def client(game):
  return TestClient(explorer.create_app(game), base_url="http://localhost")


@pytest.fixture(scope="module")
def three(three_players):
  game = SeatGame.load(three_players)
  return game, TestClient(explorer.create_app(game),
                          base_url="http://localhost")


def test_two_players_get_the_solved_values(client, game):
  info = client.get("/api/info").json()
  assert info["players"] == 2 and info["goal"] == 3000
  assert info["farkle_counts"] == 3
  assert info["seat_win"][0] == game.first_player_win()
  table = client.get("/api/table?scores=500,1000&counts=1,0").json()
  first = table["rows"][0]["cells"][0]
  assert first["n"] == 6 and first["reachable"]
  assert first["win"][0] == pytest.approx(
      game.win_probability(Position(500, 1000, 1)), abs=1e-15)
  assert table["rows"][0]["cells"][1]["reachable"] is False   # t=0, n=5
  adv = client.get("/api/advice?scores=0,0&roll=6,5,3,3,3,2").json()
  direct = game.advise(Position(0, 0), (6, 5, 3, 3, 3, 2))
  assert [c["kept"] for c in adv["choices"]] == [
      list(c.kept) for c in direct.choices]
  assert [c["win"][0] for c in adv["choices"]] == [
      c.win for c in direct.choices]
  assert adv["then"]["best"] == direct.decision.best
  dec = client.get("/api/advice?scores=0,0&t=400&n=4").json()
  want = game.decision(Position(0, 0, t=400, n=4))
  assert (dec["best"], dec["bank"][0], dec["roll"][0]) == (
      want.best, want.bank, want.roll)


def test_three_players_get_the_solved_values(three):
  game, client = three
  info = client.get("/api/info").json()
  assert info["players"] == 3 and info["seat_win"] == game.summary["seat_win"]
  assert info["opponents"] == ["optimal"]
  table = client.get("/api/table?scores=0,250,300&t_max=200").json()
  assert [r["t"] for r in table["rows"]] == [0, 50, 100, 150, 200]
  first = table["rows"][0]["cells"][0]
  assert first["n"] == 6 and first["win"] == pytest.approx(
      game.win_probabilities((0, 250, 300)).tolist(), abs=1e-13)
  advice = client.get("/api/advice?scores=0,250,300&t=0&roll=1,5,2,2,3,3"
                      ).json()
  assert [c["points"] for c in advice["choices"]][0] in (100, 150)
  decision = client.get("/api/advice?scores=0,250,300&t=200&n=2").json()
  assert decision == {"scores": [0, 250, 300], "t": 200, "n": 2,
                      **game.decision((0, 250, 300), 200, 2)}


def test_page_and_assets(client):
  page = client.get("/")
  assert page.status_code == 200 and "farkle_jax explorer" in page.text
  for name in ("app.js", "game.js", "style.css"):
    assert client.get(f"/static/{name}").status_code == 200
  assert client.get("/static/../explorer.py").status_code == 404
  assert client.get("/static/secret.py").status_code == 404


def _play_out(client, g):
  for _ in range(500):
    if g["phase"] == "over":
      return g
    if g["phase"] == "keep":
      body = {"action": "keep", "dice": g["options"][0]["dice"]}
    elif g["phase"] == "decide":
      body = {"action": "bank"}
    else:
      body = {"action": "roll"}
    g = client.post(f"/api/games/{g['id']}", json=body).json()
  raise AssertionError("the game did not end")


def test_a_game_through_the_api(client):
  g = client.post("/api/games", json={"opponent": "bank:300", "seed": 2,
                                      "first": "computer"}).json()
  assert g["phase"] == "roll" and g["log"][0] == "computer to play first"
  assert g["names"] == ["you", "computer"]
  g = _play_out(client, g)
  assert g["winner"] in ("you", "computer")
  assert g["decisions"] > 0 and len(g["costliest"]) <= 3
  assert client.get(f"/api/games/{g['id']}").json()["phase"] == "over"
  late = client.post(f"/api/games/{g['id']}", json={"action": "roll"})
  assert late.status_code == 409 and late.json()["error"] == "the game is over"


def test_a_game_of_three_through_the_api(three):
  game, client = three
  g = client.post("/api/games", json={"seed": 38, "first": "computer"}).json()
  assert g["names"] == ["you", "computer 1", "computer 2"]
  g = _play_out(client, g)
  assert max(g["scores"]) >= game.rules.goal
  assert g["scores"][g["names"].index(g["winner"])] == max(g["scores"])
  r = client.post("/api/games", json={"opponent": "bank:300"})
  assert r.status_code == 400 and "plays optimal only" in r.json()["error"]


@pytest.mark.parametrize("method, path, body, status, words", [
    ("get", "/api/table", None, 400, "scores: required"),
    ("get", "/api/table?scores=0,x", None, 400, "expected integers"),
    ("get", "/api/table?scores=0", None, 400, "expected 2 banked scores"),
    ("get", "/api/table?scores=10000,0", None, 400, "b=10000 is not a "),
    ("get", "/api/table?scores=0,0&counts=0,3", None, 400, "3 is not a "),
    ("get", "/api/table?scores=0,0&t_max=9000", None, 400, "t_max=9000"),
    ("get", "/api/advice?scores=0,0&roll=1,2,9,4,5,6", None, 400, "faces are"),
    ("get", "/api/advice?scores=0,0&roll=1,2", None, 400, "n=2 dice to roll cannot be"),
    ("get", "/api/advice?scores=0,0&t=50&n=6", None, 400, "cannot be reached"),
    ("get", "/api/advice?scores=0,0&t=x", None, 400, "t='x': expected an"),
    ("get", "/api/advice?scores=0,0&roll=", None, 400, "faces of the dice"),
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


@pytest.mark.parametrize("path, says", [
    ("/api/table?scores=0,0", "expected 3 banked scores"),
    ("/api/advice?scores=0,0,0&roll=1,9", "faces"),
    ("/api/table?scores=0,0,900", "not a banked score"),
    ("/api/table?scores=0,0,0&counts=0,0", "expected 3 banked scores"),
])
def test_three_players_bad_requests_are_one_line(three, path, says):
  r = three[1].get(path)
  assert r.status_code == 400
  error = r.json()["error"]
  assert says in error and "\n" not in error


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
