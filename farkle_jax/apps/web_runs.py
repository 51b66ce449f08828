"""The solved runs a web explorer serves side by side: the one it started
with (`MAIN`) and each one its Dice tab solved, named by a 16-hex hash of
its rules (`run_id`). A request names its run (`run=<id>`, default the
main one), so a solve never changes what another user sees.

At most `MAX_LOADED` runs besides the main one are held in memory, the
least recently used dropped first; a dropped run is loaded again from its
folder when a request names it. What JAX compiled for the runs and the
solves is let go after each solve and each drop (`release`), so the memory
of a server stays bounded however many runs it solves.
"""

from __future__ import annotations

import collections
import ctypes
import gc
import hashlib
import json
from typing import Any, Callable, NamedTuple

import jax

from farkle_jax.apps.web_games import MAIN_RUN as MAIN, BadRequest
from farkle_jax.game import dice, scoring
from farkle_jax.game.rules import Rules
from farkle_jax.solver import results
from farkle_jax.strategy.solved_game import SolvedGame

MAX_LOADED = 4      # solved runs held in memory besides the main one
MAX_KNOWN = 1000    # solved runs a request may name (the oldest forgotten)


class Served(NamedTuple):
  """A run as the explorer serves it."""
  game: Any                    # SolvedGame or SeatGame
  converged: dict[str, Any]    # results.convergence of its summary


def run_id(rules: Rules) -> str:
  """The name of a run of `rules`: the same rules, the same name (and
  folder), whoever asks."""
  text = json.dumps(rules.to_dict(), sort_keys=True)
  return hashlib.sha256(text.encode()).hexdigest()[:16]


def describe(game) -> dict[str, Any]:
  """What /api/runs says of a run: its hands, goal and opening odds."""
  rules = game.rules
  return {"hands": [list(h) for h in rules.hands], "goal": rules.goal,
          "legend": [dice.legend(h) for h in rules.hands],
          "first_player_win": float(game.win_probabilities(
              (0,) * game.players)[0])}


class Runs:
  """The main run and the solved ones, by id; callers hold the explorer's
  lock around each call.

  Args:
    main: the game the server started with, always held.
    on_drop: told of each game dropped from memory.
    cap: runs held besides the main one.
  """

  def __init__(self, main, on_drop: Callable[[Any], None] = lambda g: None,
               cap: int = MAX_LOADED):
    self.main = Served(main, results.convergence(main.summary))
    self.loaded: collections.OrderedDict[str, Served] = (
        collections.OrderedDict())
    self.known: collections.OrderedDict[str, tuple[str, dict]] = (
        collections.OrderedDict())   # id -> (folder, describe)
    self.on_drop, self.cap = on_drop, cap

  def get(self, rid: Any = None) -> Served:
    """The run named `rid` (None: the main one), loaded again if dropped;
    a 404 for a name this server has not solved."""
    if rid is None or rid == MAIN:
      return self.main
    if not isinstance(rid, str) or rid not in self.known:
      raise BadRequest(f"run={str(rid)[:40]!r}: no such run here (the "
                       f"main one, or one the Dice tab solved)", 404)
    if rid in self.loaded:
      self.loaded.move_to_end(rid)
      return self.loaded[rid]
    try:
      game = SolvedGame.load(self.known[rid][0])
    except (results.ResultsError, OSError):   # its folder was cleared
      self.known.pop(rid)
      raise BadRequest(f"run={rid!r}: its values are gone from the "
                       "server; solve its dice again", 410) from None
    return self._hold(rid, game)

  def add(self, rid: str, folder: str, game) -> None:
    """Serves the run `rid`, solved in `folder`, from now on."""
    self.known[rid] = (folder, describe(game))
    self.known.move_to_end(rid)
    while len(self.known) > MAX_KNOWN:
      old, _ = self.known.popitem(last=False)
      self._drop(old)
    self._hold(rid, game)

  def listing(self) -> list[dict[str, Any]]:
    """Every run a request may name, the main one first, then the newest."""
    main = {"run": MAIN, **describe(self.main.game)}
    return [main] + [{"run": rid, **about} for rid, (_, about)
                     in reversed(self.known.items())]

  def _hold(self, rid: str, game) -> Served:
    served = Served(game, results.convergence(game.summary))
    self.loaded[rid] = served
    self.loaded.move_to_end(rid)
    while len(self.loaded) > self.cap:
      self._drop(next(iter(self.loaded)))
    return served

  def _drop(self, rid: str) -> None:
    served = self.loaded.pop(rid, None)
    if served is not None:
      self.on_drop(served.game)


def release() -> None:
  """Lets go of what JAX compiled (every run's and solve's programs: a
  dropped run's would otherwise stay for good), of the scoring tables of
  rules no longer served, and of the heap pages freed."""
  jax.clear_caches()
  for cached in (scoring.hand_outcomes, scoring.outcomes,
                 scoring._split_values, scoring.split_totals,
                 scoring._combinations_by_low, scoring.keeps,
                 scoring.wild_totals):   # keyed by rules
    cached.cache_clear()
  gc.collect()
  try:   # glibc keeps freed pages in the process unless asked
    ctypes.CDLL("libc.so.6").malloc_trim(0)
  except (OSError, AttributeError):   # another C library: nothing to ask
    pass
