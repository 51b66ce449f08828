"""Test setup: the platform, float64, repository root importable.

The tests run on the CPU unless JAX_PLATFORMS names another platform
(`JAX_PLATFORMS=cuda python -m pytest -q` on a GPU machine); the subprocess
tests inherit the choice through the environment.
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The suite runs in two processes (pytest-xdist): on a GPU they share it,
# so neither may take most of its memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
# Scripts the tests start (python experiments/x.py) import the package from
# this checkout, installed or not (a GPU machine runs the suite from a copy).
os.environ["PYTHONPATH"] = os.pathsep.join(
    [ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])
sys.path.insert(0, os.path.join(ROOT, "tests"))

import farkle_jax  # noqa: E402,F401  (enables float64)

import pytest  # noqa: E402


def solved_once(tmp_path_factory, name: str, config) -> str:
  """The workdir of `config` solved once per test run: the pytest-xdist
  workers share it (the first to ask solves it, under a lock; the others
  wait and read it), so no fixture game is solved twice."""
  import fcntl
  from farkle_jax.solver import driver
  root = _run_root(tmp_path_factory)
  workdir = root / f"solved_{name}"
  with open(root / f"solved_{name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not (workdir / "summary.json").exists():
      driver.run(config, str(workdir))
  return str(workdir)


def _run_root(tmp_path_factory):
  """The folder of this test run, shared by its pytest-xdist workers."""
  root = tmp_path_factory.getbasetemp()
  return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


@pytest.fixture(scope="session", autouse=True)
def compilation_cache(tmp_path_factory):
  """One XLA compilation cache for the workers and every program the tests
  start: the same small programs (a resumed solve, a second process, the
  tools) compile once (`_compile_folder`)."""
  import jax
  folder = _compile_folder(tmp_path_factory, jax.__version__)
  settings = {"JAX_COMPILATION_CACHE_DIR": (folder, str),
              "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": ("0", float),
              "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": ("0", int)}
  for name, (value, kind) in settings.items():
    os.environ.setdefault(name, value)   # for the programs tests start
    jax.config.update(name.lower(), kind(os.environ[name]))
  # The plain reference's solves, likewise shared by the workers.
  os.environ.setdefault("REFERENCE_RESULTS",
                        _reference_folder(tmp_path_factory))
  yield


XLA_CACHE_BYTES = 2**30   # kept compiled programs; past this, all dropped


def _compile_folder(tmp_path_factory, version: str) -> str:
  """Where compiled programs are kept: across runs under the user's cache,
  a folder per JAX version (the last two kept). An entry's key is the
  program itself with the compiler's version and options, so a changed
  program compiles again and an unchanged one (most of a rerun) does not.
  FARKLE_JAX_TEST_CACHE=off keeps them for this run only (a cold run)."""
  import shutil
  if os.environ.get("FARKLE_JAX_TEST_CACHE") == "off":
    return str(_run_root(tmp_path_factory) / "xla_cache")
  root = os.path.join(_user_cache(), "farkle_jax", "test-xla")
  _keep_newest(root, version, 2)
  folder = os.path.join(root, version)
  if sum(e.stat().st_size for e in os.scandir(folder)) > XLA_CACHE_BYTES:
    shutil.rmtree(folder, ignore_errors=True)   # grown over many edits
  return folder


def _user_cache() -> str:
  return os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")


def _reference_folder(tmp_path_factory) -> str:
  """Where the plain reference's solves are kept. They depend on nothing
  but tests/reference.py (no package code), so they are kept across runs
  under the user's cache, in a folder named for that file's contents: an
  edited reference solves again. FARKLE_JAX_TEST_CACHE=off keeps them for
  this run only."""
  import hashlib
  if os.environ.get("FARKLE_JAX_TEST_CACHE") == "off":
    return str(_run_root(tmp_path_factory) / "reference")
  with open(os.path.join(ROOT, "tests", "reference.py"), "rb") as f:
    version = hashlib.sha256(f.read()).hexdigest()[:16]
  root = os.path.join(_user_cache(), "farkle_jax", "test-reference")
  _keep_newest(root, version, KEPT_REFERENCES)
  return os.path.join(root, version)


KEPT_REFERENCES = 3   # versions of the reference's solves kept (25 MB each)


def _keep_newest(root: str, version: str, keep: int) -> None:
  """Removes all but the `keep` most recently used versions under `root`
  (this one counted among them, and marked used now)."""
  import shutil
  import time
  os.makedirs(os.path.join(root, version), exist_ok=True)
  now = time.time()
  os.utime(os.path.join(root, version), (now, now))
  try:
    others = sorted((e for e in os.scandir(root)
                     if e.is_dir() and e.name != version),
                    key=lambda e: e.stat().st_mtime, reverse=True)
    for old in others[keep - 1:]:
      shutil.rmtree(old.path, ignore_errors=True)
  except OSError:
    pass   # another run prunes at the same time: its choice stands


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory):
  """Solved tiny games (configs/tiny.py), by name: (w0, layout, roll)."""
  from farkle_jax.solver import results
  from configs import tiny
  cache = {}

  def get(name):
    if name not in cache:
      workdir = solved_once(tmp_path_factory, f"tiny_{name}",
                        tiny.get_config(name))
      cache[name] = results.load(workdir)[:3] + (workdir,)
    return cache[name]

  return get


@pytest.fixture(scope="session")
def three_players(tmp_path_factory):
  """The workdir of a solved three-player game: minimal rules to 500."""
  from farkle_jax.solver import configuration
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  return solved_once(tmp_path_factory, "three_players", config)


@pytest.fixture(scope="session")
def seats_runs(tmp_path_factory):
  """Workdirs of minimal rules to 1,000 solved by the seat engine, by the
  number of players (2 or 3)."""
  from farkle_jax.solver import configuration

  def get(players: int) -> str:
    config = configuration.base("minimal")
    config.rules.update(goal=1000, players=players)
    config.solver.update(tol=1e-14, norm="absolute", method="seats")
    return solved_once(tmp_path_factory, f"seated_{players}", config)

  return get


@pytest.fixture(scope="session")
def unsettled_game(tmp_path_factory):
  """A solved game with one rotation cycle that has no equilibrium in pure
  turn policies (three players, minimal rules to 1,300: the smallest goal,
  in steps of 100, with one): (config, summary, start values)."""
  import numpy as np
  from farkle_jax.solver import configuration, results
  config = configuration.base("minimal")
  config.rules.update(goal=1300, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  workdir = solved_once(tmp_path_factory, "unsettled", config)
  return (config, results.read_summary(workdir),
          np.load(f"{workdir}/start_values.npy"))


class CommandLines:
  """Command lines of the entry points run by `tests/cli_worker.py`, one
  worker per module kept while this object lives: a `python -m` of its own
  would cost each a JAX start-up (1-2 s). With `fork` (the default) each
  line runs in a child forked from the worker as `python -m` runs it;
  without, in the worker itself (see cli_worker). Tests of what only a
  whole process shows (signals, the peak memory) start their own."""

  def __init__(self, fork: bool = True, env: dict | None = None):
    self._workers = {}
    self._fork = fork
    self._env = env or {}

  def __call__(self, module: str, *args: str, timeout: float = 300,
               cwd: str | None = None):
    """`python -m module args` (in `cwd`, forked lines only)."""
    import json
    import select
    import subprocess
    worker = self._workers.get(module)
    if worker is None or worker.poll() is not None:
      worker = self._workers[module] = subprocess.Popen(
          [sys.executable, os.path.join(ROOT, "tests", "cli_worker.py"),
           module, *(["--fork"] if self._fork else [])], cwd=ROOT,
          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
          env=dict(os.environ, **self._env))
    line = list(args) if cwd is None else {"args": list(args),
                                           "cwd": str(cwd)}
    worker.stdin.write(json.dumps(line) + "\n")
    worker.stdin.flush()
    if not select.select([worker.stdout], [], [], timeout)[0]:
      worker.kill()
      raise subprocess.TimeoutExpired([module, *args], timeout)
    line = worker.stdout.readline()
    assert line, f"the command-line worker of {module} died"
    out = json.loads(line)
    return subprocess.CompletedProcess([module, *args], out["code"],
                                       out["stdout"], out["stderr"])

  def close(self):
    for worker in self._workers.values():
      worker.stdin.close()
      worker.wait(timeout=60)
    self._workers.clear()


# `COMMANDS(module, *args)`: a CompletedProcess, as `python -m module args`
# would give (see CommandLines); one for the session of each process.
COMMANDS = CommandLines()


@pytest.fixture(scope="session", autouse=True)
def _close_command_lines():
  yield
  COMMANDS.close()


def play_web_games(game, seeds, **start) -> list[dict]:
  """Games of the web API (`explorer.create_app(game)`) to their end, one
  per seed, the person keeping the first option and rolling on; `start`:
  more fields of the new game's request. Returns each game's last state."""
  from starlette.testclient import TestClient
  from farkle_jax.apps import explorer
  web = TestClient(explorer.create_app(game), base_url="http://localhost")
  ends = []
  for seed in seeds:
    g = web.post("/api/games", json={"seed": seed, **start}).json()
    for _ in range(400):
      if g["phase"] == "over":
        break
      body = ({"action": "keep", "dice": g["options"][0]["dice"]}
              if g["phase"] == "keep" else {"action": "roll"})
      reply = web.post(f"/api/games/{g['id']}", json=body)
      assert reply.status_code == 200, reply.text
      g = reply.json()
    assert g["phase"] == "over"
    ends.append(g)
  return ends


def crash_in_sweeps(monkeypatch, owner, name: str, save_from: int,
                    crash_at: int):
  """Replaces the stage engine's compiled run of steps `owner.name` by one
  that, from its call `save_from` on, has the engine save its position
  after every step (`stage_engine.SAVE_SECONDS` 0) and raises
  KeyboardInterrupt at call `crash_at`, as a crash within a sweep would;
  every call runs one step (`stage_engine.CALL_SECONDS` 0). Returns a
  function that puts the step back."""
  from farkle_jax.solver import stage_engine
  step, calls = getattr(owner, name), []
  monkeypatch.setattr(stage_engine, "CALL_SECONDS", 0)

  def failing(*args, **kwargs):
    calls.append(1)
    if len(calls) == save_from:
      monkeypatch.setattr(stage_engine, "SAVE_SECONDS", 0)
    if len(calls) == crash_at:
      raise KeyboardInterrupt
    return step(*args, **kwargs)

  monkeypatch.setattr(owner, name, failing)
  return lambda: monkeypatch.setattr(owner, name, step)
