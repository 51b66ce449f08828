"""Advice under load: concurrent clients against one explorer server.

  python experiments/advice_load.py                     # shipped facebook
  python experiments/advice_load.py --workdir runs/three --clients 8 \
      --requests 1000 --json experiments/results/advice_load/three.json

Starts `python -m farkle_jax.apps.serve` on a free localhost port for the
run (--workdir, of any number of players; default the shipped facebook
values), then --clients threads, each with a keep-alive connection of its
own, send --requests GET /api/advice in all, taken in turn from one list.
Each is a random position of the run that play reaches (every player's
banked score and farkle count, a turn total short of the goal that play
reaches with the n dice to roll) and a random roll of those n dice, so
nearly every request asks a start-of-turn key no request asked before.
--warmup requests go first, untimed. Prints p50, p99 and max in
milliseconds (from sending a request to its decoded answer), the errors
(answers other than 200, or none) and the requests per second of the timed
part, and writes them to --json.
"""

import functools
import http.client
import json
import os
import threading
import time

import numpy as np
from absl import app, flags

import farkle_jax  # (also enables float64)
from advice_latency import percentiles, serve, write_figures
from benchmark import cpu_name
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.strategy.positions import PositionError

def layout_of(game):
  """The score layout of either kind of solved game."""
  return game.seats if hasattr(game, "seats") else game.layout


def queries(game, count: int, seed: int) -> list[str]:
  """`count` query strings of GET /api/advice: random reachable positions
  of `game` (two or more players, dice alike), each with a random roll."""
  if not game.rules.dice_alike:
    raise PositionError("advice_load: only rules whose dice are alike")
  rng = np.random.default_rng(seed)
  lay, players = layout_of(game), game.players
  chances = np.array([float(c) for c in game.rules.face_chances])
  reach = functools.lru_cache(maxsize=None)(
      lambda top, start: np.argwhere(roll_tables.reachable(
          game.check.roll, top + 1, start)))
  out = []
  for _ in range(count):
    key = [int(rng.integers(s)) for s in lay.key_shape]
    # Every (t, n) reachable from the start of the mover's turn, t up to
    # the last total short of the goal.
    cells = reach(int(lay.t_max(key[0])), int(lay.start_state(key[players])))
    t, n = (int(x) for x in cells[rng.integers(len(cells))])
    n += 1
    dice = rng.choice(np.arange(1, 7), n, p=chances / chances.sum())
    out.append("/api/advice?scores="
               + ",".join(str(int(lay.points(i))) for i in key[:players])
               + "&counts=" + ",".join(map(str, key[players:]))
               + f"&t={t * lay.unit}&n={n}&roll="
               + ",".join(map(str, dice)))
  return out


def load(port: int, paths: list[str], clients: int
         ) -> tuple[list[float], list[str], float]:
  """Sends `paths` from `clients` threads, each on its own keep-alive
  connection: (milliseconds of each answered request, the errors, wall
  seconds)."""
  ms, errors, lock = [], [], threading.Lock()
  todo = iter(paths)

  def client():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while True:
      with lock:
        path = next(todo, None)
      if path is None:
        break
      start = time.perf_counter()
      try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = json.loads(response.read())
        took = 1e3 * (time.perf_counter() - start)
        error = (None if response.status == 200 else
                 f"{response.status} {body.get('error')} ({path})")
      except (OSError, http.client.HTTPException, ValueError) as e:
        took, error = None, f"{type(e).__name__}: {e} ({path})"
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
      with lock:
        if took is not None:
          ms.append(took)
        if error:
          errors.append(error)
    conn.close()

  threads = [threading.Thread(target=client) for _ in range(clients)]
  start = time.perf_counter()
  for th in threads:
    th.start()
  for th in threads:
    th.join()
  return ms, errors, time.perf_counter() - start


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if _CLIENTS.value < 1 or _REQUESTS.value < 1 or _WARMUP.value < 0:
    raise app.UsageError("--clients and --requests: at least 1; --warmup: "
                         "at least 0")
  game = farkle_jax.load(_WORKDIR.value)
  paths = queries(game, _WARMUP.value + _REQUESTS.value, _SEED.value)
  proc, port = serve(_WORKDIR.value)
  try:
    load(port, paths[:_WARMUP.value], _CLIENTS.value)
    ms, errors, wall = load(port, paths[_WARMUP.value:], _CLIENTS.value)
  finally:
    proc.terminate()
    proc.wait()
  figures = {"values": game.label, "players": game.players,
             "rules": game.rules.name, "goal": game.rules.goal,
             "clients": _CLIENTS.value,
             **percentiles(ms or [float("nan")]),
             "requests": _REQUESTS.value, "answered": len(ms),
             "errors": len(errors), "first_errors": errors[:5],
             "requests_per_s": _REQUESTS.value / wall,
             "machine": f"{cpu_name()}, {os.cpu_count()} cores",
             "date": time.strftime("%Y-%m-%d")}
  print(f"{game.players} players, {_CLIENTS.value} clients: p50 "
        f"{figures['p50_ms']:.2f} ms  p99 {figures['p99_ms']:.2f} ms  max "
        f"{figures['max_ms']:.2f} ms  errors {len(errors)}  "
        f"{figures['requests_per_s']:.1f} requests/s  ({_REQUESTS.value} "
        "requests)")
  for e in errors[:5]:
    print("  error:", e)
  if _JSON.value:
    write_figures(_JSON.value, figures)


if __name__ == "__main__":   # (tests import this file: no flags then)
  _WORKDIR = flags.DEFINE_string("workdir", None, "Solved run, of any "
                                 "number of players (default: the shipped "
                                 "facebook values).")
  _CLIENTS = flags.DEFINE_integer("clients", 8, "Concurrent clients.")
  _REQUESTS = flags.DEFINE_integer("requests", 1000, "Timed requests, in "
                                   "all.")
  _WARMUP = flags.DEFINE_integer("warmup", 50, "Untimed requests first.")
  _SEED = flags.DEFINE_integer("seed", 0, "Seed of the positions and rolls.")
  _JSON = flags.DEFINE_string("json", None, "Write the figures here.")
  command_line.run(main)
