"""The web explorer's JSON API and page, as a Starlette app.

    GET  /                          the single-page explorer
    GET  /api/info                  rules, score range, first-player W
    GET  /api/table?b=&d=&f=&e=     turn table of a start-of-turn state
    GET  /api/advice?b=&d=&f=&e=&t=&n=[&roll=6,5,3,3,3,2]
                                    ranked choices for a roll, or bank/roll
    POST /api/games, GET|POST /api/games/<id>
                                    a game against the computer
                                    (`web_games`)

A request the API cannot answer gets a 4xx status and {"error": one line};
the computer's turns are played out before a game is returned.
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

from farkle_jax.apps import web_games, web_guard
from farkle_jax.apps.web_games import BadRequest
from farkle_jax.solver import results
from farkle_jax.strategy import catalog
from farkle_jax.strategy.solved_game import Position
from farkle_jax.strategy.solved_game import SolvedGame, parse_dice

PAGE = os.path.join(os.path.dirname(__file__), "web")
def _int(params, name: str, default: int | None = None) -> int:
  text = params.get(name)
  if text is None:
    if default is None:
      raise BadRequest(f"{name}: required")
    return default
  try:
    return int(text)
  except ValueError:
    raise BadRequest(f"{name}={text!r}: expected an integer") from None


def _position(params) -> Position:
  return Position(*(_int(params, k, v) for k, v in
                    (("b", None), ("d", None), ("f", 0), ("e", 0), ("t", 0),
                     ("n", 6))))


class Explorer:
  """The endpoints over one solved game; its games live in memory."""

  def __init__(self, game: SolvedGame):
    self.game = game
    self.lock = threading.Lock()   # the turn cache and the games are shared
    self.room = web_games.GameRoom(game)

  def info(self, request: Request) -> dict[str, Any]:
    game, lay = self.game, self.game.layout
    return {"rules": game.rules.to_dict(), "source": _source(game.label),
            **results.convergence(game.run.summary),
            "goal": game.rules.goal, "step": lay.unit,
            "low": game.rules.low, "high": game.rules.goal - lay.unit,
            "farkle_counts": lay.num_farkle,
            "bank_minimum": game.rules.bank_minimum,
            "entry_minimum": game.rules.entry_minimum,
            "first_player_win": game.first_player_win(),
            "opponents": list(catalog.NAMES)}

  def table(self, request: Request) -> dict[str, Any]:
    q = request.query_params
    t_max = _int(q, "t_max", -1)
    if t_max > self.game.rules.goal:
      raise BadRequest(f"t_max={t_max}: at most the goal "
                       f"{self.game.rules.goal}")
    return self._flagged(self.game.turn_table(
        _int(q, "b"), _int(q, "d"), _int(q, "f", 0), _int(q, "e", 0),
        None if t_max < 0 else t_max))

  def advice(self, request: Request) -> dict[str, Any]:
    q = request.query_params
    pos = _position(q)
    if q.get("roll") is None:
      return self._flagged({"position": pos._asdict(),
                            "decision": self.game.decision(pos).as_dict()})
    return self._flagged(
        self.game.advise(pos, parse_dice(q["roll"])).as_dict())

  def _flagged(self, answer: dict[str, Any]) -> dict[str, Any]:
    """The answer, marked when it comes from unconverged values."""
    if not results.convergence(self.game.run.summary)["converged"]:
      answer["unconverged"] = True
    return answer


def create_app(game: SolvedGame,
               hosts: frozenset[str] | None = web_guard.LOOPBACK
               ) -> Starlette:
  """The explorer's app over one solved game, answering the Host names
  `hosts` (`web_guard`)."""
  ex = Explorer(game)

  locked = lambda fn: web_games.under(ex.lock, fn)

  async def page(request: Request):
    return FileResponse(os.path.join(PAGE, "index.html"))

  async def asset(request: Request):
    name = request.path_params["name"]
    if name not in ("app.js", "game.js", "style.css"):
      raise BadRequest(f"no file {name!r}", 404)
    return FileResponse(os.path.join(PAGE, name))

  answer = web_games.json_endpoint
  return Starlette(routes=[
      Route("/", page), Route("/static/{name}", answer(asset, raw=True)),
      Route("/api/info", answer(locked(ex.info))),
      Route("/api/table", answer(locked(ex.table))),
      Route("/api/advice", answer(locked(ex.advice))),
      *web_games.routes(ex.room, ex.lock),
  ], middleware=[Middleware(web_guard.Guard, hosts=hosts)],
      exception_handlers=web_guard.ERROR_HANDLERS)


def _source(label: str) -> str:
  """Where the values came from, without the server's paths."""
  if label.startswith("shipped:"):
    return label
  return f"run {os.path.basename(os.path.normpath(label))}"
