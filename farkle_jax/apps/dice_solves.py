"""Each player's dice chosen in the web explorer, solved on request.

    POST /api/solve   {"hands": ["lucky, lucky", ""], "goal": 2000}
                      solves the served rules with each player's hand (up
                      to six dice, comma-separated: catalog names or six
                      chances such as 0.3/0.1/0.1/0.1/0.3/0.1; the rest
                      fair; blank: six fair dice) and the goal given
                      (default: the served one); 202 and the job's status
    GET  /api/solve   the status: idle, running (sweeps, max change,
                      elapsed, ETA), done (the explorer now serves it) or
                      failed (one line)

Only a server started with `serve --solve_dir DIR` solves; one solve at a
time, each bounded by MAX_STATES model states (and the memory estimate);
finished runs stay in DIR (a repeated request loads its run). Dice that are
not in the catalog, or rules that cannot take hands (a penalty, a final
round, more players), are refused in one line before anything runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
from typing import Any, Callable

from farkle_jax.apps.web_games import BadRequest
from farkle_jax.game import dice
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import configuration, driver
from farkle_jax.strategy.solved_game import SolvedGame

MAX_STATES = 12_000_000   # about a minute on 2 CPU cores


def _die(text: str):
  """A catalog name, or six face chances written 0.3/0.1/0.1/0.1/0.3/0.1."""
  if "/" not in text:
    return text
  try:
    return tuple(float(x) for x in text.split("/"))
  except ValueError:
    raise BadRequest(f"die {text!r}: a catalog name or six chances of faces "
                     "1..6, e.g. 0.3/0.1/0.1/0.1/0.3/0.1") from None


class Solves:
  """The one solve a server runs at a time, and what it last did."""

  def __init__(self, rules: Rules, folder: str | None,
               serve: Callable[[SolvedGame], None]):
    self.rules, self.folder, self.serve = rules, folder, serve
    self.lock = threading.Lock()
    self.status: dict[str, Any] = {"state": "idle"}

  def get(self, request=None) -> dict[str, Any]:
    with self.lock:
      return dict(self.status)

  def start(self, body: dict[str, Any]) -> dict[str, Any]:
    if self.folder is None:
      raise BadRequest("this server does not solve: start it with "
                       "serve --solve_dir DIR", 403)
    config, rules = self._config(body)
    states = StateLayout(rules).num_states
    if states > MAX_STATES:
      raise BadRequest(f"goal={rules.goal}: {states:,} model states, at most "
                       f"{MAX_STATES:,} on request (a lower goal fits)", 413)
    with self.lock:
      if self.status["state"] == "running":
        raise BadRequest("a solve is running: wait for it", 409)
      self.status = {"state": "running", "hands": list(rules.hands),
                     "goal": rules.goal, "states": states, "sweeps": 0,
                     "elapsed": 0.0, "eta": "?", "started": time.time()}
    threading.Thread(target=self._solve, args=(config, rules),
                     daemon=True).start()
    return self.get()

  def _config(self, body: dict[str, Any]) -> tuple[Any, Rules]:
    """The served rules with the hands (and goal) of the request: the
    config and its checked rules."""
    hands, goal = body.get("hands"), body.get("goal", self.rules.goal)
    if (not isinstance(hands, list) or len(hands) != 2
        or not all(isinstance(h, str) for h in hands)):
      raise BadRequest("hands: two strings, each player's dice by catalog "
                       "name, e.g. [\"lucky, lucky\", \"\"] (blank: fair)")
    specs = tuple(tuple(_die(x.strip()) for x in h.split(",") if x.strip())
                  for h in hands)
    if isinstance(goal, bool) or not isinstance(goal, int):
      raise BadRequest(f"goal={goal!r}: an integer number of points")
    config = configuration.base("minimal")
    config.rules.update(
        {k: v for k, v in dataclasses.asdict(self.rules).items()
         if k not in ("hands", "dice")})
    config.rules.update(hands=specs, goal=goal)
    config.solver.update(tol=1e-12, norm="absolute", sweeps_per_call=1)
    try:
      return config, configuration.check(config)[0]
    except configuration.ConfigError as e:
      raise BadRequest(str(e)) from None

  def _solve(self, config, rules: Rules) -> None:
    name = hashlib.sha256(json.dumps(rules.to_dict(), sort_keys=True)
                          .encode()).hexdigest()[:16]
    workdir = os.path.join(self.folder, f"hands_{name}")

    def report(chunk: driver.ChunkReport) -> None:
      with self.lock:
        self.status.update(sweeps=chunk.iteration, residual=chunk.residual,
                           elapsed=chunk.elapsed, eta=chunk.eta)

    try:
      driver.ensure(config, workdir, on_chunk=report)
      game = SolvedGame.load(workdir)
      self.serve(game)
      with self.lock:
        self.status.update(state="done", first_player_win=
                           game.first_player_win(), legend=[
                               dice.legend(h) for h in rules.hands])
    except Exception as e:   # the page shows it; the server goes on
      with self.lock:
        self.status.update(state="failed",
                           error=str(e).splitlines()[0] if str(e) else
                           type(e).__name__)
