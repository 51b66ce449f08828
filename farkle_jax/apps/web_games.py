"""Games against the computer over HTTP, for any number of players.

The explorer (`explorer`, any number of players) routes its game requests
here:

    POST /api/games        {"opponent", "first", "seed", "run"}: a new
                           game on the served run named (default: main)
    GET  /api/games/<id>   the game as the person sees it
    POST /api/games/<id>   {"action": "roll" | "bank" | "keep", "dice": [..]}

The rules of play are `strategy.match`; this module keeps the games in
memory (one unused for `GAME_IDLE` seconds dropped, and the least recently
used past `MAX_GAMES`), checks each request's body and plays the
computers' turns out before a game is returned.
"""

from __future__ import annotations

import collections
import secrets
import threading
import time
from typing import Any, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from farkle_jax.apps import web_guard
from farkle_jax.solver.configuration import ConfigError
from farkle_jax.strategy import catalog, match
from farkle_jax.strategy.solved_game import PositionError

MAX_GAMES = 1000     # games kept in memory; the least recently used dropped
GAME_IDLE = 3600.0   # seconds a game is kept unused
MAIN_RUN = "main"    # the run a server started with (`web_runs`)


class BadRequest(ValueError):
  """A request the API refuses, with its status (and headers, such as a
  429's Retry-After)."""

  def __init__(self, message: str, status: int = 400,
               headers: dict[str, str] | None = None):
    super().__init__(message)
    self.status, self.headers = status, headers


class _Game:
  """A game in progress on the server, on the run named `run`."""

  def __init__(self, run: str | None, state: match.MatchState,
               computer: match.Computer, dice: match.Dice, opponent: str):
    self.run, self.state, self.computer = run, state, computer
    self.dice, self.opponent = dice, opponent
    self.used = time.monotonic()


class GameRoom:
  """The games in progress, each on its own run (`SolvedGame` or
  `SeatGame`, as `resolve(run)` gives it); callers hold their own lock
  around each call.

  A game lives until it has been left alone for `idle` seconds, or until
  `MAX_GAMES` others were used since; its run is looked up on every request
  (a run the server dropped from memory is loaded again), so a game holds
  no run in memory.
  """

  def __init__(self, resolve: Callable[[Any], Any], idle: float = GAME_IDLE):
    self.resolve, self.idle = resolve, idle
    self.games: collections.OrderedDict[str, _Game] = (
        collections.OrderedDict())   # the least recently used first

  def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
    opponent = body.get("opponent", "optimal")
    first, seed = body.get("first", "human"), body.get("seed")
    if first not in ("human", "computer"):
      raise BadRequest(f"first={first!r}: one of human, computer")
    if seed is not None and (not isinstance(seed, int)
                             or isinstance(seed, bool)):
      raise BadRequest(f"seed={seed!r}: an integer or null")
    run = body.get("run", MAIN_RUN)
    game = self.resolve(run)
    if not isinstance(opponent, str):
      raise BadRequest(f"opponent={opponent!r}: one of "
                       f"{match.opponents(game)}")
    computer = match.Computer(game, opponent)
    state = match.start(game, match.PERSON if first == "human"
                        else match.COMPUTER)
    g = _Game(run, state, computer, match.Dice(seed, game.rules), opponent)
    _computer_plays(g)
    gid = secrets.token_hex(8)
    self._expire()
    self.games[gid] = g
    while len(self.games) > MAX_GAMES:
      self.games.popitem(last=False)
    return _view(game, gid, g)

  def _find(self, gid: str) -> tuple[Any, _Game]:
    """The game `gid` and its run's game, marked used now."""
    self._expire()
    if gid not in self.games:
      raise BadRequest(f"no game {gid[:40]!r} (a game is kept until it is "
                       f"left alone for {self.idle / 3600:g} h)", 404)
    g = self.games[gid]
    self.games.move_to_end(gid)
    g.used = time.monotonic()
    game = self.resolve(g.run)
    if g.computer is None:   # its run was dropped from memory: as it was
      g.computer = match.Computer(game, g.opponent)
    return game, g

  def forget(self, game) -> None:
    """Lets go of `game`, which the server dropped from memory: the
    computers that play on it are made again from the reloaded run."""
    for g in self.games.values():
      if g.computer is not None and g.computer.game is game:
        g.computer = None

  def _expire(self) -> None:
    now = time.monotonic()
    while self.games and now - next(iter(self.games.values())).used > (
        self.idle):
      self.games.popitem(last=False)

  def show(self, gid: str) -> dict[str, Any]:
    game, g = self._find(gid)
    return _view(game, gid, g)

  def move(self, gid: str, body: dict[str, Any]) -> dict[str, Any]:
    game, g = self._find(gid)
    _person_moves(game, g, body)
    _computer_plays(g)
    return _view(game, gid, g)


# The project's own refusals of what a request asks: a 400 with their line.
# Any other error is a bug, answered 500 by `web_guard.Guard`.
REFUSALS = (PositionError, catalog.StrategyError, ConfigError)


def json_endpoint(handler: Callable, raw: bool = False,
                  status: int = 200) -> Callable:
  """An endpoint that answers JSON (with `status`), and a 4xx with one
  line when the request is refused (`BadRequest`, `REFUSALS`)."""

  async def endpoint(request: Request):
    try:
      out = handler(request)
      if hasattr(out, "__await__"):
        out = await out
      return out if raw else JSONResponse(out, status_code=status)
    except BadRequest as e:
      return JSONResponse({"error": str(e)}, status_code=e.status,
                          headers=e.headers)
    except REFUSALS as e:
      return JSONResponse({"error": web_guard.one_line(e)}, status_code=400)

  return endpoint


async def read_body(request: Request) -> dict[str, Any]:
  try:
    body = await request.json()
  except ValueError:
    raise BadRequest("the body is not JSON") from None
  if not isinstance(body, dict):
    raise BadRequest("the body must be a JSON object")
  return body


def under(lock: threading.Lock, fn: Callable) -> Callable:
  """`fn`, called holding `lock`."""
  def run(*args):
    with lock:
      return fn(*args)
  return run


def routes(room: GameRoom, lock: threading.Lock) -> list[Route]:
  """The /api/games routes over `room`, each call under `lock` (the
  solved game's caches are shared with the explorer's other queries)."""

  locked = lambda fn: under(lock, fn)

  async def new_game(request: Request):
    return locked(room.new_game)(await read_body(request))

  async def move(request: Request):
    return locked(room.move)(request.path_params["gid"],
                             await read_body(request))

  def show(request: Request):
    return locked(room.show)(request.path_params["gid"])

  return [Route("/api/games", json_endpoint(new_game), methods=["POST"]),
          Route("/api/games/{gid}", json_endpoint(show), methods=["GET"]),
          Route("/api/games/{gid}", json_endpoint(move), methods=["POST"])]


def _person_moves(game, g: _Game, body: dict[str, Any]) -> None:
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
  """Whether a request's dice are a list of faces: integers, or 'A1'-style
  strings where the dice differ (the game checks them)."""
  return isinstance(dice, list) and all(
      (isinstance(x, int) and not isinstance(x, bool))
      or (isinstance(x, str) and len(x) == 2) for x in dice)


def _waits(phase: str) -> str:
  return {"roll": "roll", "keep": "keep (with dice)",
          "decide": "bank or roll"}[phase]


def _computer_plays(g: _Game) -> None:
  """The computers move until the person must, or the game is over."""
  while g.state.phase != "over" and g.state.mover != match.PERSON:
    s = g.state
    g.state = g.computer.step(s, g.dice.roll(s.n) if s.phase == "roll"
                              else None)


def _view(game, gid: str, g: _Game) -> dict[str, Any]:
  """The game as the person sees it (no win probability before a move):
  every seat's name and banked score, the person's first."""
  s = g.state
  names, scores = match.names(s.players), match.scores(game, s)
  view = {"id": gid, "run": g.run, "opponent": g.opponent, "phase": s.phase,
          "names": list(names), "scores": list(scores),
          "mover": names[s.mover], "goal": game.rules.goal,
          "turn": s.turn, "t": s.t, "n": s.n, "dice": list(s.dice),
          "left": match.dice_words(game, s.n),
          "bar": s.bar or None,
          "ties_shared": game.rules.ties_shared,
          "log": list(s.log), "options": [], "winner": None,
          "last_move": s.moves[-1]._asdict() | {"loss": s.moves[-1].loss}
          if s.moves else None}
  if s.phase == "keep":
    options = sorted(match.options(game, s),
                     key=lambda c: (-c.points, len(c.kept)))
    view["options"] = [{"dice": list(c.kept), "points": c.points,
                        "t": c.t, "n": c.n,
                        "left": match.dice_words(game, c.n)}
                       for c in options]
  if s.phase == "over":
    total, worst = match.summary(s)
    view["winner"] = None if s.winner is None else names[s.winner]
    view["sharers"] = [names[i] for i in s.sharers]
    view["result"] = match.result(s)
    view["given_away"] = total
    view["decisions"] = len(s.moves)
    view["costliest"] = [m._asdict() | {"loss": m.loss} for m in worst]
  return view
