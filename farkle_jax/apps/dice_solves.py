"""Each player's dice chosen in the web explorer, solved on request.

    POST /api/solve   {"hands": ["lucky, lucky", ""], "goal": 2000}
                      solves the served rules with each player's hand (up
                      to six dice, comma-separated: catalog names or six
                      chances such as 0.3/0.1/0.1/0.1/0.3/0.1; the rest
                      fair; blank: six fair dice) and the goal given
                      (default: the served one); 202 and the solve's
                      status, whose `run` names the run it makes
    GET  /api/solve[?run=<id>]
                      that solve's status (default: the latest): running
                      (its phase, building tables then sweeping, from the
                      first second: elapsed, sweeps, max change, ETA),
                      done (served from now on as run <id>, beside the
                      others: `web_runs`) or failed (one line)

Only a server started with `serve --solve_dir DIR` solves; one solve at a
time (a request for other dice meanwhile gets a 429 with Retry-After; for
the same dice, the running solve's status), each bounded by MAX_STATES
model states (and the memory estimate); finished runs stay in DIR (a
repeated request loads its run). Dice that are not in the catalog, or rules
that cannot take hands (a penalty, a final round, more players), are
refused in one line before anything runs. No status names a path, a
process or a host: a failure is its one line with those taken out.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import socket
import threading
import time
from typing import Any, Callable

from absl import logging

from farkle_jax.apps import web_guard, web_runs
from farkle_jax.apps.web_games import BadRequest
from farkle_jax.game import dice
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import (checkpointing, configuration, driver, locking,
                               memory, results)
from farkle_jax.strategy.solved_game import SolvedGame

MAX_STATES = 12_000_000   # about a minute on 2 CPU cores
MAX_JOBS = 50             # statuses kept, the oldest dropped
# The solver's own refusals: a failed solve's line (paths taken out); any
# other error is a bug, logged, and the status says only INTERNAL.
REFUSALS = (configuration.ConfigError, memory.MemoryRefused,
            driver.NotConverged, driver.SolveFault, locking.WorkdirLocked,
            checkpointing.CheckpointMismatch, results.ResultsError)


def _die(text: str):
  """A catalog name, or six face chances written 0.3/0.1/0.1/0.1/0.3/0.1."""
  if "/" not in text:
    return text
  try:
    return tuple(float(x) for x in text.split("/"))
  except ValueError:
    raise BadRequest(f"die {text[:40]!r}: a catalog name or six chances of "
                     "faces 1..6, e.g. 0.3/0.1/0.1/0.1/0.3/0.1") from None


class Solves:
  """The one solve a server runs at a time, and the status of the last
  `MAX_JOBS`, by run id.

  Args:
    rules: the served rules, which each request's hands and goal change.
    folder: where the runs go (None: this server does not solve).
    solved: told `(run id, its folder, its SolvedGame)` of each finished
      solve before its status says done.
  """

  def __init__(self, rules: Rules, folder: str | None,
               solved: Callable[[str, str, SolvedGame], None]):
    self.rules, self.folder, self.solved = rules, folder, solved
    self.lock = threading.Lock()
    self.jobs: collections.OrderedDict[str, dict[str, Any]] = (
        collections.OrderedDict())
    self._running: str | None = None

  def running(self) -> bool:
    with self.lock:
      return self._running is not None

  def get(self, request=None) -> dict[str, Any]:
    rid = None if request is None else request.query_params.get("run")
    with self.lock:
      if rid is None:
        return (self._view(next(reversed(self.jobs))) if self.jobs
                else {"state": "idle"})
      if rid not in self.jobs:
        raise BadRequest(f"run={rid[:40]!r}: no solve of that name here",
                         404)
      return self._view(rid)

  def start(self, body: dict[str, Any]) -> dict[str, Any]:
    if self.folder is None:
      raise BadRequest("this server does not solve: start it with "
                       "serve --solve_dir DIR", 403)
    config, rules = self._config(body)
    states = StateLayout(rules).num_states
    if states > MAX_STATES:
      raise BadRequest(f"goal={rules.goal}: {states:,} model states, at most "
                       f"{MAX_STATES:,} on request (a lower goal fits)", 413)
    rid = web_runs.run_id(rules)
    with self.lock:
      if self._running == rid:   # the same dice: that solve's status
        return self._view(rid)
      if self._running is not None:
        wait = _retry_after(self.jobs[self._running])
        raise BadRequest(f"another solve is running: try again in {wait} s",
                         429, {"Retry-After": str(wait)})
      self._running = rid
      self.jobs.pop(rid, None)
      self.jobs[rid] = {"state": "running", "run": rid, "phase": "starting",
                        "hands": list(body["hands"]), "goal": rules.goal,
                        "states": states, "sweeps": 0, "eta": "?",
                        "started": time.monotonic()}
      while len(self.jobs) > MAX_JOBS:
        self.jobs.popitem(last=False)
    threading.Thread(target=self._solve, args=(rid, config, rules),
                     daemon=True).start()
    return self.get_run(rid)

  def get_run(self, rid: str) -> dict[str, Any]:
    with self.lock:
      return self._view(rid)

  def _view(self, rid: str) -> dict[str, Any]:
    """A job's status, its elapsed time counted to now while it runs."""
    job = dict(self.jobs[rid])
    started = job.pop("started")
    if job["state"] == "running":
      job["elapsed"] = round(time.monotonic() - started, 1)
    return job

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
      raise BadRequest(f"goal={str(goal)[:20]!r}: an integer number of "
                       "points")
    config = configuration.base("minimal")
    config.rules.update(
        {k: v for k, v in dataclasses.asdict(self.rules).items()
         if k not in ("hands", "dice")})
    config.rules.update(hands=specs, goal=goal)
    config.solver.update(tol=1e-12, norm="absolute", sweeps_per_call=1)
    try:
      return config, configuration.check(config)[0]
    except configuration.ConfigError as e:
      raise BadRequest(str(e).splitlines()[0]) from None

  def _update(self, rid: str, **fields) -> None:
    with self.lock:
      self.jobs.get(rid, {}).update(fields)

  def _solve(self, rid: str, config, rules: Rules) -> None:
    """Solves (or loads) the run in the thread of the request's solve; the
    status follows each phase."""
    workdir = os.path.join(self.folder, f"hands_{rid}")
    self._update(rid, phase="building tables")

    def report(chunk: driver.ChunkReport) -> None:
      self._update(rid, phase="sweeping", sweeps=chunk.iteration,
                   residual=chunk.residual, eta=chunk.eta)

    end: dict[str, Any] = {"state": "failed"}
    try:
      driver.ensure(config, workdir, on_chunk=report)
      self._update(rid, phase="loading")
      game = SolvedGame.load(workdir)
      self.solved(rid, workdir, game)
      end = {"state": "done", "phase": "done", "first_player_win":
             game.first_player_win(),
             "legend": [dice.legend(h) for h in rules.hands]}
    except REFUSALS as e:
      end["error"] = self._public(e, workdir)
    except Exception:   # a bug: the log has it, the status one line
      logging.error("the solve of run %s failed", rid, exc_info=True)
      end["error"] = web_guard.INTERNAL
    finally:
      with self.lock:
        job = self.jobs.get(rid, {"started": time.monotonic()})
        job.update(end, elapsed=round(time.monotonic() - job["started"], 1))
        self._running = None

  def _public(self, e: Exception, workdir: str) -> str:
    """The error's one line without a path, a process id or a host name
    (the solver's messages name its workdir and the holder of its lock)."""
    line = web_guard.one_line(e)
    for where in (workdir, os.path.abspath(workdir), self.folder,
                  os.path.abspath(self.folder)):
      line = line.replace(where, "the run's folder")
    line = re.sub(r"(?<![\w.])/[^\s'\"(),;]+", "a folder", line)
    line = re.sub(r"\bpid\s*[=:]?\s*\d+", "a process", line)
    host = socket.gethostname()
    return re.sub(rf"\b{re.escape(host)}\b", "a host", line) if host else line


def _retry_after(job: dict[str, Any]) -> int:
  """Seconds a second request should wait: the running solve's ETA where
  its sweeps tell one, else 10; from 1 to 600."""
  parts = job.get("eta", "?").split(":")
  if len(parts) == 3 and all(p.isdigit() for p in parts):
    h, m, s = map(int, parts)
    return min(600, max(1, 3600 * h + 60 * m + s + 2))
  return 10
