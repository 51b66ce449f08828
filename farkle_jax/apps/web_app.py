"""The web explorer's JSON API and page, as a Starlette app.

    GET  /                          the single-page explorer
    GET  /api/info                  rules, score range, first-player W
    GET  /api/table?b=&d=&f=&e=     turn table of a start-of-turn state
    GET  /api/advice?b=&d=&f=&e=&t=&n=[&roll=6,5,3,3,3,2]
                                    ranked choices for a roll, or bank/roll
    POST /api/games                 {"opponent", "first", "seed"}: new game
    GET  /api/games/<id>            the game as the person sees it
    POST /api/games/<id>            {"action": "roll" | "bank" | "keep",
                                     "dice": [..]}: the person's move

A request the API cannot answer gets a 4xx status and {"error": one line};
the computer's turns are played out before a game is returned.
"""

from __future__ import annotations

import collections
import os
import secrets
import threading
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from farkle_jax.apps import web_guard
from farkle_jax.solver import results
from farkle_jax.strategy import catalog, match
from farkle_jax.strategy.solved_game import Position, PositionError
from farkle_jax.strategy.solved_game import SolvedGame, parse_dice

PAGE = os.path.join(os.path.dirname(__file__), "web")
MAX_GAMES = 1000   # games kept in memory; the oldest is dropped


class BadRequest(ValueError):
  """A request the API refuses, with its status."""

  def __init__(self, message: str, status: int = 400):
    super().__init__(message)
    self.status = status


class _Game:
  """A game in progress on the server."""

  def __init__(self, state: match.MatchState, computer: match.Computer,
               dice: match.Dice, opponent: str):
    self.state, self.computer, self.dice = state, computer, dice
    self.opponent = opponent


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
    self.games: collections.OrderedDict[str, _Game] = (
        collections.OrderedDict())

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

  def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
    opponent = body.get("opponent", "optimal")
    first, seed = body.get("first", "human"), body.get("seed")
    if first not in ("human", "computer"):
      raise BadRequest(f"first={first!r}: one of human, computer")
    if seed is not None and (not isinstance(seed, int)
                             or isinstance(seed, bool)):
      raise BadRequest(f"seed={seed!r}: an integer or null")
    if not isinstance(opponent, str):
      raise BadRequest(f"opponent={opponent!r}: one of {catalog.NAMES}")
    catalog.check_name(opponent, self.game.layout.unit)
    state = match.start(self.game, match.PERSON if first == "human"
                        else match.COMPUTER)
    g = _Game(state, match.Computer(self.game, opponent), match.Dice(seed),
              opponent)
    _computer_plays(g)
    gid = secrets.token_hex(8)
    self.games[gid] = g
    if len(self.games) > MAX_GAMES:
      self.games.popitem(last=False)
    return _view(self.game, gid, g)

  def _find(self, gid: str) -> _Game:
    if gid not in self.games:
      raise BadRequest(f"no game {gid!r} (finished games are kept until "
                       f"{MAX_GAMES} newer ones start)", 404)
    return self.games[gid]

  def show_game(self, request: Request) -> dict[str, Any]:
    gid = request.path_params["gid"]
    return _view(self.game, gid, self._find(gid))

  def move(self, gid: str, body: dict[str, Any]) -> dict[str, Any]:
    g = self._find(gid)
    _person_moves(self.game, g, body)
    _computer_plays(g)
    return _view(self.game, gid, g)


def create_app(game: SolvedGame,
               hosts: frozenset[str] | None = web_guard.LOOPBACK
               ) -> Starlette:
  """The explorer's app over one solved game, answering the Host names
  `hosts` (`web_guard`)."""
  ex = Explorer(game)

  def locked(fn: Callable) -> Callable:
    def run(*args):
      with ex.lock:
        return fn(*args)
    return run

  async def new_game(request: Request):
    return locked(ex.new_game)(await _body(request))

  async def move(request: Request):
    return locked(ex.move)(request.path_params["gid"], await _body(request))

  async def page(request: Request):
    return FileResponse(os.path.join(PAGE, "index.html"))

  async def asset(request: Request):
    name = request.path_params["name"]
    if name not in ("app.js", "style.css"):
      raise BadRequest(f"no file {name!r}", 404)
    return FileResponse(os.path.join(PAGE, name))

  return Starlette(routes=[
      Route("/", page), Route("/static/{name}", _json(asset, raw=True)),
      Route("/api/info", _json(locked(ex.info))),
      Route("/api/table", _json(locked(ex.table))),
      Route("/api/advice", _json(locked(ex.advice))),
      Route("/api/games", _json(new_game), methods=["POST"]),
      Route("/api/games/{gid}", _json(locked(ex.show_game)),
            methods=["GET"]),
      Route("/api/games/{gid}", _json(move), methods=["POST"]),
  ], middleware=[Middleware(web_guard.Guard, hosts=hosts)],
      exception_handlers=web_guard.ERROR_HANDLERS)


def _json(handler: Callable, raw: bool = False) -> Callable:
  """An endpoint that answers JSON, and a 4xx with one line on bad input."""

  async def endpoint(request: Request):
    try:
      out = handler(request)
      if hasattr(out, "__await__"):
        out = await out
      return out if raw else JSONResponse(out)
    except BadRequest as e:
      return JSONResponse({"error": str(e)}, status_code=e.status)
    except (PositionError, catalog.StrategyError, ValueError) as e:
      return JSONResponse({"error": web_guard.one_line(e)}, status_code=400)

  return endpoint


def _source(label: str) -> str:
  """Where the values came from, without the server's paths."""
  if label.startswith("shipped:"):
    return label
  return f"run {os.path.basename(os.path.normpath(label))}"


async def _body(request: Request) -> dict[str, Any]:
  try:
    body = await request.json()
  except ValueError:
    raise BadRequest("the body is not JSON") from None
  if not isinstance(body, dict):
    raise BadRequest("the body must be a JSON object")
  return body


def _person_moves(game: SolvedGame, g: _Game, body: dict[str, Any]) -> None:
  s, action = g.state, body.get("action")
  if s.phase == "over":
    raise BadRequest("the game is over", 409)
  if action == "keep":
    dice = body.get("dice")
    if not _faces(dice):
      raise BadRequest("keep: 'dice' must be a list of faces, e.g. [5]")
    g.state = match.keep(game, s, dice)
  elif action == "bank" and s.phase == "decide":
    g.state = match.decide(game, s, "bank")
  elif action == "roll":
    if s.phase == "decide":
      s = match.decide(game, s, "roll")
    if s.phase != "roll":
      raise BadRequest(f"roll: the game waits for {s.phase}", 409)
    dice = body.get("dice")
    if dice is not None and not _faces(dice):
      raise BadRequest("roll: 'dice' must be a list of faces, e.g. "
                       "[6, 5, 3] (or left out: the server rolls)")
    g.state = match.roll(game, s, g.dice.roll(s.n) if dice is None
                         else tuple(dice))
  else:
    raise BadRequest(f"action={action!r} is not allowed now: the game "
                     f"waits for {_waits(s.phase)}")


def _faces(dice: Any) -> bool:
  """Whether a request's dice are a list of integers (faces are checked
  by the game)."""
  return isinstance(dice, list) and all(
      isinstance(x, int) and not isinstance(x, bool) for x in dice)


def _waits(phase: str) -> str:
  return {"roll": "roll", "keep": "keep (with dice)",
          "decide": "bank or roll"}[phase]


def _computer_plays(g: _Game) -> None:
  """The computer moves until the person must, or the game is over."""
  while g.state.phase != "over" and g.state.mover == match.COMPUTER:
    s = g.state
    g.state = g.computer.step(s, g.dice.roll(s.n) if s.phase == "roll"
                              else None)


def _view(game: SolvedGame, gid: str, g: _Game) -> dict[str, Any]:
  """The game as the person sees it (no win probability before a move)."""
  s = g.state
  you, computer = match.scores(game, s)
  view = {"id": gid, "opponent": g.opponent, "phase": s.phase,
          "you": you, "computer": computer, "goal": game.rules.goal,
          "turn": s.turn, "t": s.t, "n": s.n, "dice": list(s.dice),
          "bar": s.bar or None,
          "log": list(s.log), "options": [], "winner": None,
          "last_move": s.moves[-1]._asdict() | {"loss": s.moves[-1].loss}
          if s.moves else None}
  if s.phase == "keep":
    options = sorted(match.options(game, s),
                     key=lambda c: (-c.points, len(c.kept)))
    view["options"] = [{"dice": list(c.kept), "points": c.points,
                        "t": c.t, "n": c.n} for c in options]
  if s.phase == "over":
    total, worst = match.summary(s)
    view["winner"] = match.NAMES[s.winner]
    view["given_away"] = total
    view["decisions"] = len(s.moves)
    view["costliest"] = [m._asdict() | {"loss": m.loss} for m in worst]
  return view
