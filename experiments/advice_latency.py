"""Latency of advice requests on a solved run: the Python API, HTTP, and
the advise command from a cold start.

  python experiments/advice_latency.py                 # shipped facebook
  python experiments/advice_latency.py --workdir W --requests 1000
  python experiments/advice_latency.py --cold_only --cold_starts 10

Each request is a random position of the solved model (a random
start-of-turn key, a random reachable turn total and dice count) and a
random roll of those dice, so nearly every request rebuilds a turn no
request asked for before (the turn cache does not help). After --warmup
requests, --requests are timed one by one, first through
`SolvedGame.advise`, then as GET /api/advice to `farkle_jax.apps.serve` started
on this machine (a keep-alive connection, JSON decoded). Prints p50, p99
and max in milliseconds and writes them to --json.

Then --cold_starts times the advise command as a player types it, each run
a fresh process started from the system's temporary folder (interpreter,
imports, reading the values, the answer: `farkle advise --b 0 --d 0 --roll
6,5,3,3,3,2`, with --workdir where one is given), alternating with
`python -c "import numpy"`, the floor of any process that reads the values;
best and median wall seconds of each. --cold_only times only these.
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from absl import app, flags

import farkle_jax  # noqa: F401  (enables float64)
from benchmark import cpu_name
from farkle_jax.apps import command_line
from farkle_jax.solver import queries
from farkle_jax.strategy.solved_game import Position, SolvedGame

def requests(game: SolvedGame, count: int, seed: int):
  """`count` random (position, roll) pairs of the solved model."""
  rng = np.random.default_rng(seed)
  lay = game.layout
  out = []
  while len(out) < count:
    b, d, f, e = (int(rng.integers(s)) for s in lay.key_shape)
    reach = queries.reachable(lay, game.run.roll, b)
    t, n = (int(x) for x in
            np.argwhere(reach[:int(lay.t_max(b)) + 1])[
                rng.integers(int(reach[:int(lay.t_max(b)) + 1].sum()))])
    n += 1
    pos = Position(int(lay.points(b)), int(lay.points(d)), f, e, t * lay.unit,
                   n)
    out.append((pos, tuple(int(x) for x in rng.integers(1, 7, n))))
  return out


def write_figures(path: str, figures: dict) -> None:
  """The figures as JSON at `path` (its folder made if need be)."""
  os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
  with open(path, "w") as fh:
    json.dump(figures, fh, indent=1)


def percentiles(ms: list[float]) -> dict[str, float]:
  a = np.array(ms)
  return {"p50_ms": float(np.percentile(a, 50)),
          "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max()),
          "requests": len(ms)}


def time_api(game, work) -> list[float]:
  ms = []
  for pos, roll in work:
    start = time.perf_counter()
    game.advise(pos, roll)
    ms.append(1e3 * (time.perf_counter() - start))
  return ms


def time_http(port: int, work) -> list[float]:
  conn = http.client.HTTPConnection("127.0.0.1", port)
  ms = []
  for pos, roll in work:
    path = (f"/api/advice?scores={pos.b},{pos.d}&counts={pos.f},{pos.e}"
            f"&t={pos.t}&n={pos.n}&roll={','.join(map(str, roll))}")
    start = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = json.loads(response.read())
    ms.append(1e3 * (time.perf_counter() - start))
    assert response.status == 200, body
  return ms


def serve(workdir: str | None) -> tuple[subprocess.Popen, int]:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  args = ["--workdir", workdir] if workdir else ["--shipped", "facebook"]
  proc = subprocess.Popen([sys.executable, "-m", "farkle_jax.apps.serve",
                           *args, "--port", str(port)],
                          stdout=subprocess.PIPE, text=True)
  proc.stdout.readline()   # printed once the values are loaded
  for _ in range(600):
    try:
      socket.create_connection(("127.0.0.1", port), timeout=1).close()
      return proc, port
    except OSError:
      time.sleep(0.1)
  raise RuntimeError("the server did not start")


# The command of the cold-start figure: the README's worked example.
COLD_ARGS = ("--b", "0", "--d", "0", "--roll", "6,5,3,3,3,2")


def _wall(args: list[str]) -> float:
  """Wall seconds of `python args`, a fresh process in the temporary folder
  (the package as installed, not a checkout in the working folder)."""
  start = time.perf_counter()
  subprocess.run([sys.executable, *args], check=True, capture_output=True,
                 cwd=tempfile.gettempdir())
  return time.perf_counter() - start


def cold_starts(runs: int, workdir: str | None) -> dict:
  """Best and median wall seconds of `runs` advise commands from a cold
  start, and of as many `python -c "import numpy"` between them."""
  args = [*COLD_ARGS, *(["--workdir", workdir] if workdir else [])]
  advise, floor = [], []
  for _ in range(runs):
    advise.append(_wall(["-m", "farkle_jax.apps.advise", *args]))
    floor.append(_wall(["-c", "import numpy"]))
  return {"command": "farkle advise " + " ".join(args), "runs": runs,
          "best_s": min(advise), "median_s": statistics.median(advise),
          "numpy_best_s": min(floor),
          "numpy_median_s": statistics.median(floor)}


def print_cold(c: dict) -> None:
  print(f"cold  best {c['best_s']:.3f} s  median {c['median_s']:.3f} s  "
        f"({c['runs']} runs of {c['command']}; python -c 'import numpy': "
        f"best {c['numpy_best_s']:.3f} s, median "
        f"{c['numpy_median_s']:.3f} s)")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  machine = {"machine": f"{cpu_name()}, {os.cpu_count()} cores",
             "date": time.strftime("%Y-%m-%d")}
  if _COLD_ONLY.value:
    figures = {"cold": cold_starts(_COLD.value, _WORKDIR.value), **machine}
    print_cold(figures["cold"])
    if _JSON.value:
      write_figures(_JSON.value, figures)
    return
  game = SolvedGame.open(_WORKDIR.value, "facebook")
  total = _WARMUP.value + _REQUESTS.value
  work = requests(game, 2 * total, _SEED.value)
  api_work, http_work = work[:total], work[total:]
  time_api(game, api_work[:_WARMUP.value])
  api = percentiles(time_api(game, api_work[_WARMUP.value:]))
  proc, port = serve(_WORKDIR.value)
  try:
    time_http(port, http_work[:_WARMUP.value])
    over_http = percentiles(time_http(port, http_work[_WARMUP.value:]))
  finally:
    proc.terminate()
    proc.wait()
  lay = game.layout
  figures = {"values": game.label, "rules": game.rules.name,
             "goal": game.rules.goal, "floor": game.rules.floor,
             "keys": lay.num_keys, "api": api, "http": over_http, **machine}
  for name in ("api", "http"):
    f = figures[name]
    print(f"{name:<5} p50 {f['p50_ms']:6.2f} ms  p99 {f['p99_ms']:6.2f} ms  "
          f"max {f['max_ms']:6.2f} ms  ({f['requests']} requests)")
  if _COLD.value:
    figures["cold"] = cold_starts(_COLD.value, _WORKDIR.value)
    print_cold(figures["cold"])
  if _JSON.value:
    write_figures(_JSON.value, figures)


if __name__ == "__main__":   # (advice_load imports this file: no flags then)
  _WORKDIR = flags.DEFINE_string("workdir", None, "Solved run (default: "
                                 "the shipped facebook values).")
  _REQUESTS = flags.DEFINE_integer("requests", 1000, "Timed requests.")
  _WARMUP = flags.DEFINE_integer("warmup", 50, "Untimed requests first.")
  _SEED = flags.DEFINE_integer("seed", 0, "Seed of the positions and rolls.")
  _JSON = flags.DEFINE_string("json", None, "Write the figures here.")
  _COLD = flags.DEFINE_integer("cold_starts", 5, "Advise commands timed "
                               "from a cold start (0: none).")
  _COLD_ONLY = flags.DEFINE_bool("cold_only", False, "Time only the "
                                 "advise command from a cold start.")
  command_line.run(main)
