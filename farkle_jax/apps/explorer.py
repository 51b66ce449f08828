"""The web explorer's JSON API and page, as a Starlette app, for solved
games of any number of players (`SolvedGame` or `SeatGame`): the one the
server started with, and beside it each one its Dice tab solved.

    GET  /                                  the page
    GET  /api/info                          rules, players, score range,
                                            farkle counts, each seat's W
    GET  /api/runs                          the runs served: main, and each
                                            solved one's id, hands, goal
    GET  /api/table?scores=0,500[&counts=0,1&t_max=]
                                            the mover's turn table
    GET  /api/advice?scores=..[&counts=&t=&n=]&roll=6,5,3,3,3,2
                                            ranked choices for a roll, and
                                            bank or roll after the best
                                            ("then")
    GET  /api/advice?scores=..[&counts=&t=&n=]
                                            bank or roll, both vectors
    POST /api/games, GET|POST /api/games/<id>
                                            a game against the computer
                                            (`web_games`)
    POST /api/solve, GET /api/solve        each player's dice chosen in the
                                            page, solved and then served
                                            as a run of its own
                                            (`dice_solves`)

Info, table, advice and a new game take `run=<id>` (a query parameter, or
the body's "run"), default the main run (`web_runs`); a game remembers its
run.

Scores are in points and farkle counts in turns, one per player in turn
order from the player to move; every win probability is a vector over the
players, the mover's first. A request the API refuses gets a 4xx and
{"error": one line}, an error nobody foresaw a 500 (`web_guard`); values
of an unconverged run are marked.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.routing import Route

from farkle_jax.apps import dice_solves, web_games, web_guard, web_runs
from farkle_jax.apps.web_games import BadRequest
from farkle_jax.game import dice
from farkle_jax.strategy import match
from farkle_jax.strategy.positions import parse_dice, parse_scores

PAGE = os.path.join(os.path.dirname(__file__), "web")
ASSETS = ("app.js", "game.js", "dice.js", "style.css")


def _int(params, name: str, default: int | None) -> int | None:
  text = params.get(name)
  if text is None:
    return default
  try:
    return int(text)
  except ValueError:
    raise BadRequest(f"{name}={text!r}: expected an integer") from None


class Explorer:
  """The endpoints over the served runs (`web_runs`); the games live in
  `room`, each on its run."""

  def __init__(self, game, solve_dir: str | None = None):
    self.lock = threading.Lock()   # the runs, their caches and the games
    self.runs = web_runs.Runs(game, on_drop=self._dropped)
    self.room = web_games.GameRoom(lambda run: self.runs.get(run).game)
    self.solves = dice_solves.Solves(game.rules, solve_dir, self._solved)

  def _solved(self, rid: str, folder: str, game) -> None:
    """Serves a finished solve beside the other runs, then lets go of what
    JAX compiled for it."""
    with self.lock:
      self.runs.add(rid, folder, game)
      web_runs.release()

  def _dropped(self, game) -> None:
    self.room.forget(game)
    if not self.solves.running():   # a solve compiling now releases after
      web_runs.release()

  def _served(self, q) -> web_runs.Served:
    return self.runs.get(q.get("run"))

  def _position(self, q) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    if "scores" not in q:
      raise BadRequest("scores: required, e.g. scores=0,500 (one per "
                       "player, the player to move first)")
    scores = parse_scores(q["scores"])
    counts = parse_scores(q["counts"], "counts") if q.get("counts") else None
    return scores, counts

  def info(self, request: Request) -> dict[str, Any]:
    run = request.query_params.get("run", web_runs.MAIN)
    served = self._served(request.query_params)
    game, rules = served.game, served.game.rules
    return {"run": run, "players": game.players, "rules": rules.to_dict(),
            "solves": self.solves.folder is not None,
            "catalog": sorted(dice.catalog()),
            "source": _source(game.label) if run == web_runs.MAIN
            else f"run {run}", **served.converged,
            "goal": rules.goal, "step": rules.step, "low": rules.low,
            "high": rules.goal - rules.step,
            "farkle_counts": rules.farkle_states,
            "bank_minimum": rules.bank_minimum,
            "entry_minimum": rules.entry_minimum,
            "seat_win": game.win_probabilities(
                (0,) * game.players).tolist(),   # the opening
            "opponents": list(match.opponents(game))}

  def listing(self, request: Request) -> dict[str, Any]:
    return {"runs": self.runs.listing()}

  def table(self, request: Request) -> dict[str, Any]:
    q = request.query_params
    served = self._served(q)
    scores, counts = self._position(q)
    return _flagged(served, served.game.table(   # the game checks t_max
        scores, counts, _int(q, "t_max", None)))

  def advice(self, request: Request) -> dict[str, Any]:
    q = request.query_params
    served = self._served(q)
    scores, counts = self._position(q)
    roll = q.get("roll")
    # n left out: the game's default (the whole hand, or the roll's dice).
    n = {} if q.get("n") is None else {"n": _int(q, "n", 6)}
    return _flagged(served, served.game.advice(
        scores, _int(q, "t", 0), roll=None if roll is None
        else parse_dice(roll), counts=counts, **n))


def _flagged(served: web_runs.Served, answer: dict[str, Any]
             ) -> dict[str, Any]:
  """The answer, marked when it comes from unconverged values."""
  if not served.converged["converged"]:
    answer["unconverged"] = True
  return answer


def create_app(game, hosts: frozenset[str] | None = web_guard.LOOPBACK,
               solve_dir: str | None = None) -> Starlette:
  """The explorer's app over one solved game, answering the Host names
  `hosts` (`web_guard`); with `solve_dir`, it solves each player's dice
  chosen in the page there (`dice_solves`)."""
  ex = Explorer(game, solve_dir)
  locked = lambda fn: web_games.under(ex.lock, fn)

  async def page(request: Request):
    return FileResponse(os.path.join(PAGE, "index.html"))

  async def asset(request: Request):
    name = request.path_params["name"]
    if name not in ASSETS:
      raise BadRequest(f"no file {name!r}", 404)
    return FileResponse(os.path.join(PAGE, name))

  async def solve(request: Request):
    return ex.solves.start(await web_games.read_body(request))

  answer = web_games.json_endpoint
  return Starlette(routes=[
      Route("/", page), Route("/static/{name}", answer(asset, raw=True)),
      Route("/api/info", answer(locked(ex.info))),
      Route("/api/runs", answer(locked(ex.listing))),
      Route("/api/table", answer(locked(ex.table))),
      Route("/api/advice", answer(locked(ex.advice))),
      Route("/api/solve", answer(ex.solves.get), methods=["GET"]),
      Route("/api/solve", answer(solve, status=202), methods=["POST"]),
      *web_games.routes(ex.room, ex.lock),
  ], middleware=[Middleware(web_guard.Guard, hosts=hosts)],
      exception_handlers=web_guard.ERROR_HANDLERS)


def _source(label: str) -> str:
  """Where the values came from, without the server's paths."""
  if label.startswith("shipped:"):
    return label
  return f"run {os.path.basename(os.path.normpath(label))}"
