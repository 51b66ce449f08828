"""The N-player explorer's API: solved values, and bad requests answered
with a 4xx and one line."""

import pytest
from starlette.testclient import TestClient

from farkle_jax.apps import seats_web
from farkle_jax.strategy import seat_game


@pytest.fixture(scope="module")
def game(three_players):
  return seat_game.SeatGame.load(three_players)


@pytest.fixture(scope="module")
def client(game):
  return TestClient(seats_web.create_app(game), base_url="http://localhost")


def test_the_api_gives_the_solved_values(client, game):
  info = client.get("/api/info").json()
  assert info["players"] == 3 and info["seat_win"] == game.summary["seat_win"]
  got = client.get("/api/seats?scores=0,250,300").json()
  assert got["win"] == game.win_probabilities((0, 250, 300)).tolist()
  table = client.get("/api/table?scores=0,250,300&t_max=200").json()
  assert [r["t"] for r in table["rows"]] == [0, 50, 100, 150, 200]
  first = table["rows"][0]["cells"][0]
  assert first["n"] == 6 and first["win"][0] == pytest.approx(got["win"][0])
  advice = client.get("/api/advice?scores=0,250,300&t=0&roll=1,5,2").json()
  assert [c["points"] for c in advice["choices"]][0] in (100, 150)
  decision = client.get("/api/advice?scores=0,250,300&t=200&n=2").json()
  assert decision == {"scores": [0, 250, 300], "t": 200, "n": 2,
                      **game.decision((0, 250, 300), 200, 2)}
  assert client.get("/").status_code == 200
  assert client.get("/static/seats.js").status_code == 200


@pytest.mark.parametrize("path, says", [
    ("/api/seats", "scores: required"),
    ("/api/seats?scores=0,0", "expected 3 banked scores"),
    ("/api/seats?scores=a,b,c", "expected integers"),
    ("/api/advice?scores=0,0,0&t=x", "t='x': expected an integer"),
    ("/api/advice?scores=0,0,0&roll=1,9", "faces"),
    ("/api/table?scores=0,0,900", "not a banked score"),
])
def test_bad_requests_get_a_4xx_and_one_line(client, path, says):
  r = client.get(path)
  assert r.status_code == 400
  error = r.json()["error"]
  assert says in error and "\n" not in error
  assert client.get("/static/secret.py").status_code == 404
