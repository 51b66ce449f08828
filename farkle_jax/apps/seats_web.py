"""The web explorer for a game of more than two players, as a Starlette app.

    GET /                                   the page: every player's score
    GET /api/info                           rules, players, each seat's W
    GET /api/seats?scores=0,500,1200        win probabilities and the
                                            turn totals each n banks from
    GET /api/table?scores=..[&t_max=]       the mover's turn table
    GET /api/advice?scores=..&t=&n=[&roll=] ranked choices for a roll and
                                            bank or roll after the best
                                            ("then"), or bank or roll
    POST /api/games, GET|POST /api/games/<id>
                                            a game against the computers
                                            (`web_games`)

Scores are in points, one per player in turn order from the player to
move. A request the API cannot answer gets a 4xx and {"error": one line}.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from farkle_jax.apps import web_games, web_guard
from farkle_jax.solver import results
from farkle_jax.strategy import seat_game
from farkle_jax.strategy.solved_game import PositionError, parse_dice

PAGE = os.path.join(os.path.dirname(__file__), "web")
ASSETS = ("seats.js", "game.js", "style.css")


def _int(q, name: str, default: int) -> int:
  try:
    return int(q.get(name, default))
  except ValueError:
    raise PositionError(f"{name}={q.get(name)!r}: expected an integer"
                        ) from None


class SeatsExplorer:
  """The endpoints over one solved N-player game."""

  def __init__(self, game: seat_game.SeatGame):
    self.game = game
    self.lock = threading.Lock()   # one jit cache, one turn at a time
    self.room = web_games.GameRoom(game)

  def _scores(self, q) -> tuple[int, ...]:
    if "scores" not in q:
      raise PositionError("scores: required, e.g. scores=0,500,1200")
    return seat_game.parse_scores(q["scores"])

  def info(self, q) -> dict[str, Any]:
    g = self.game
    return {"players": g.seats.players, "rules": g.rules.to_dict(),
            "goal": g.rules.goal, "step": g.seats.unit,
            "bank_minimum": g.rules.bank_minimum,
            "seat_win": g.summary["seat_win"], "opponents": ["optimal"],
            "unsettled_keys": g.summary.get("unsettled_keys", 0),
            **results.convergence(g.summary)}

  def seats(self, q) -> dict[str, Any]:
    scores = self._scores(q)
    return {"scores": scores,
            "win": self.game.win_probabilities(scores).tolist(),
            "bank_from": self.game.bank_thresholds(scores)}

  def table(self, q) -> dict[str, Any]:
    t_max = _int(q, "t_max", 3000)
    if not 0 <= t_max <= max(3000, self.game.rules.goal):
      raise PositionError(f"t_max={t_max}: from 0 to "
                          f"{max(3000, self.game.rules.goal)}")
    return self.game.turn_table(self._scores(q), None, t_max)

  def advice(self, q) -> dict[str, Any]:
    roll = q.get("roll")
    return self.game.advice(self._scores(q), _int(q, "t", 0),
                            _int(q, "n", 6),
                            None if roll is None else parse_dice(roll))


def create_app(game: seat_game.SeatGame,
               hosts: frozenset[str] | None = web_guard.LOOPBACK
               ) -> Starlette:
  """The N-player explorer's app, answering the Host names `hosts`."""
  ex = SeatsExplorer(game)
  unconverged = not results.convergence(game.summary)["converged"]

  def api(fn: Callable) -> Callable:
    async def endpoint(request: Request):
      try:
        with ex.lock:
          answer = fn(request.query_params)
        if unconverged:   # values of a run above its tolerance, marked
          answer["unconverged"] = True
        return JSONResponse(answer)
      except (PositionError, ValueError) as e:
        return JSONResponse({"error": web_guard.one_line(e)},
                            status_code=400)
    return endpoint

  async def page(request: Request):
    return FileResponse(os.path.join(PAGE, "seats.html"))

  async def asset(request: Request):
    name = request.path_params["name"]
    if name not in ASSETS:
      return JSONResponse({"error": f"no file {name!r}"}, status_code=404)
    return FileResponse(os.path.join(PAGE, name))

  return Starlette(routes=[
      Route("/", page), Route("/static/{name}", asset),
      Route("/api/info", api(ex.info)), Route("/api/seats", api(ex.seats)),
      Route("/api/table", api(ex.table)), Route("/api/advice", api(ex.advice)),
      *web_games.routes(ex.room, ex.lock),
  ], middleware=[Middleware(web_guard.Guard, hosts=hosts)],
      exception_handlers=web_guard.ERROR_HANDLERS)
