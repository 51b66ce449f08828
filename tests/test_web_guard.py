"""Every route of the explorer, over two players and three, under crafted
requests: a 4xx with one line of JSON, never a 5xx; the Host, the body
size and the content type are checked before any route runs; and an error
nobody foresaw is a 500 with one generic line, its traceback logged."""

import json
import logging
import string

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

from farkle_jax.apps import explorer, web_guard
from farkle_jax.strategy import seat_game
from farkle_jax.strategy.solved_game import SolvedGame

LOCAL = "http://localhost"


@pytest.fixture(scope="module")
def pair_client():
  return TestClient(explorer.create_app(SolvedGame.shipped("default")),
                    base_url=LOCAL)


@pytest.fixture(scope="module")
def seats_client(three_players):
  return TestClient(explorer.create_app(
      seat_game.SeatGame.load(three_players)), base_url=LOCAL)


def _one_line_error(r):
  assert r.status_code < 500, r.text
  if r.status_code >= 400:
    error = r.json()["error"]
    assert isinstance(error, str) and error and "\n" not in error
    assert "Traceback" not in error and "/" not in error.split(" ")[0]


def test_hosts_follow_the_bound_address():
  assert web_guard.allowed_hosts("127.0.0.1") == web_guard.LOOPBACK
  assert web_guard.allowed_hosts("0.0.0.0") is None
  assert web_guard.allowed_hosts("192.168.1.5") == {"192.168.1.5"}


@pytest.mark.parametrize("base, status", [
    ("http://localhost:8000", 200), ("http://127.0.0.1:8000", 200),
    ("http://[::1]:8000", 200), ("http://evil.example", 400),
    ("http://127.0.0.1.evil.example:8000", 400)])
def test_a_host_not_bound_to_is_refused(pair_client, base, status):
  client = TestClient(pair_client.app, base_url=base)
  r = client.get("/api/info")
  assert r.status_code == status
  if status == 400:
    assert "is not served here" in r.json()["error"]


def test_a_server_on_every_address_answers_any_host(three_players):
  app = explorer.create_app(seat_game.SeatGame.load(three_players),
                            web_guard.allowed_hosts("0.0.0.0"))
  r = TestClient(app, base_url="http://my-box.lan:8000").get("/api/info")
  assert r.status_code == 200


def test_post_bodies_are_json_and_bounded(pair_client):
  big = json.dumps({"opponent": "x" * web_guard.MAX_BODY})
  r = pair_client.post("/api/games", content=big,
                       headers={"content-type": "application/json"})
  assert r.status_code == 413
  # No Content-Length (a streamed body): counted as it arrives.
  r = pair_client.post("/api/games", content=(
      b"x" * 4096 for _ in range(web_guard.MAX_BODY // 4096 + 2)),
                       headers={"content-type": "application/json"})
  assert r.status_code == 413
  r = pair_client.post("/api/games", content=b"{}",
                       headers={"content-type": "text/plain"})
  assert r.status_code == 415


def test_an_unforeseen_failure_is_a_500_with_one_generic_line(caplog):
  def broken(request):
    raise RuntimeError("a bug in /srv/farkle/runs\nwith two lines")
  app = Starlette(routes=[Route("/x", broken)],
                  middleware=[Middleware(web_guard.Guard)])
  with caplog.at_level(logging.ERROR):
    r = TestClient(app, base_url=LOCAL).get("/x")
  assert r.status_code == 500
  assert r.json() == {"error": "internal error: please report it"}
  assert "a bug in /srv/farkle/runs" in caplog.text   # the log has it all
  assert "Traceback" in caplog.text


@pytest.mark.parametrize("error", [ValueError("no such key /srv/x"),
                                   KeyError("n"), ZeroDivisionError()])
def test_a_value_error_of_the_program_is_no_400(pair_client, error,
                                                monkeypatch):
  """Only the project's refusals are the client's fault: a ValueError, a
  KeyError raised by the program itself is a bug, answered 500."""
  def broken(*args, **kwargs):
    raise error
  monkeypatch.setattr(SolvedGame, "table", broken)
  r = pair_client.get("/api/table?scores=0,0")
  assert r.status_code == 500, r.text
  assert r.json() == {"error": "internal error: please report it"}


def test_the_info_names_no_server_path(pair_client, tmp_path):
  info = pair_client.get("/api/info").json()
  assert info["source"] == "shipped:default" and info["converged"] is True


# Values a crafted request may carry: wrong types, nesting, sizes, numbers
# far out of range.
ATOMS = (st.none() | st.booleans() | st.integers()
         | st.integers(min_value=10**20, max_value=10**40)
         | st.floats(allow_nan=True) | st.text(max_size=30))
JSON = st.recursive(ATOMS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner,
                                      max_size=4), max_leaves=12)
PARAM = (st.integers(-10**30, 10**30).map(str)
         | st.text(string.printable, max_size=20)
         | st.sampled_from(["", "1,5,2", "0,250,300", "6,5,3,3,3,2",
                            "1" * 5000, "nan", "-0", "1e3"]))
NAMES = ["scores", "counts", "t", "n", "roll", "t_max", "x"]
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(path=st.sampled_from(["/api/info", "/api/table", "/api/advice",
                             "/api/games/abc", "/static/app.js",
                             "/static/..%2Fexplorer.py"]),
       params=st.dictionaries(st.sampled_from(NAMES), PARAM,
                              max_size=5))
def test_fuzz_every_get_of_the_two_player_explorer(pair_client, path, params):
  _one_line_error(pair_client.get(path, params=params))


@FUZZ
@given(body=JSON, move=JSON)
def test_fuzz_every_post_of_the_two_player_explorer(pair_client, body, move):
  r = pair_client.post("/api/games", json=body)
  _one_line_error(r)
  game = pair_client.post("/api/games", json={"seed": 1}).json()["id"]
  _one_line_error(pair_client.post(f"/api/games/{game}", json=move))
  if isinstance(move, dict):
    for action in ("roll", "keep", "bank"):
      _one_line_error(pair_client.post(f"/api/games/{game}",
                                       json={**move, "action": action}))


@FUZZ
@given(path=st.sampled_from(["/api/info", "/api/table", "/api/advice",
                             "/api/games/abc", "/static/game.js"]),
       params=st.dictionaries(st.sampled_from(NAMES), PARAM, max_size=5))
def test_fuzz_every_get_of_three_players(seats_client, path, params):
  _one_line_error(seats_client.get(path, params=params))


@FUZZ
@given(body=JSON, move=JSON)
def test_fuzz_every_post_of_three_players(seats_client, body, move):
  _one_line_error(seats_client.post("/api/games", json=body))
  game = seats_client.post("/api/games", json={"seed": 1}).json()["id"]
  _one_line_error(seats_client.post(f"/api/games/{game}", json=move))
