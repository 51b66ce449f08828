"""Every user error of the entry points: one line, exit 2 (usage) or 1;
Ctrl-C 130; a bug 3."""

import errno
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

from conftest import COMMANDS, ROOT

ENV = dict(os.environ)  # JAX_PLATFORMS: see conftest
TINY = ("--config", "configs/tiny.py:minimal")


def _run(module, *args, timeout=300):
  """`python -m module args`, forked from a worker (conftest.CommandLines);
  the tests of signals start processes of their own."""
  return COMMANDS(module, *args, timeout=timeout)


def _one_line(out, code, *words):
  """The run ended with exit `code` and a single stderr line of ours."""
  lines = [l for l in out.stderr.splitlines() if l.strip()]
  errors = [l for l in lines if l.startswith("error: ")]
  assert out.returncode == code, out.stderr[-3000:]
  assert len(errors) == 1 and "Traceback" not in out.stderr, out.stderr
  for w in words:
    assert w in errors[0], errors[0]
  return errors[0]


@pytest.mark.parametrize("args, words", [
    (("--config.solver.tolerance=1",),
     ("--config.solver.tolerance", "did you mean --config.solver.tol?")),
    (("--config=configs/nope.py",), ("configs/nope.py: no such file",)),
    (("--config=configs/tiny.py:unknown",), ("rules.preset = 'unknown'",)),
    (("--config.solver.tol=nan",), ("solver.tol = nan", "finite")),
    (("--config.solver.tol=inf",), ("solver.tol = inf", "finite")),
    (("--config.solver.init_value=nan",), ("solver.init_value = nan",)),
    (("--config.memory_limit_gb=nan",), ("memory_limit_gb = nan",)),
    (("--config.solver.tol=abc",), ("abc",)),
    (("--config.rules.single_scores=100",), ("single_scores",)),
    (("--config.rules.triple_scores=(1000,200)",), ("triple_scores",)),
    (("--workdir=",), ("--workdir is empty",)),
    (("--workdir=/etc/hostname",), ("is a file",)),
    (("--bogus",), ("--bogus: no such flag",)),
])
def test_main_usage_errors(tmp_path, args, words):
  out = _run("farkle_jax.main", *TINY, f"--workdir={tmp_path}/w", *args)
  _one_line(out, 2, *words)
  assert not os.path.exists(tmp_path / "w")


def test_verbose_shows_the_traceback(tmp_path):
  out = _run("farkle_jax.main", *TINY, f"--workdir={tmp_path}/w",
             "--config.solver.tol=nan", "--verbose")
  assert out.returncode == 2 and "Traceback" in out.stderr
  assert out.stderr.strip().splitlines()[-1].startswith("error: ")


def test_unwritable_workdir_is_one_line(tmp_path):
  out = _run("farkle_jax.main", *TINY, "--workdir=/proc/farkle_run")
  _one_line(out, 2, "/proc/farkle_run", "cannot write there")


def test_tuple_rule_fields_override_from_the_command_line(tmp_path):
  out = _run("farkle_jax.main", *TINY, f"--workdir={tmp_path}",
             "--config.rules.single_scores=(100,0,0,0,100,0)",
             "--config.rules.fixed_n_of_a_kind=(1000,2000,4000)")
  assert out.returncode == 0, out.stderr[-2000:]
  rules = json.load(open(tmp_path / "summary.json"))["rules"]
  assert rules["single_scores"] == [100, 0, 0, 0, 100, 0]
  assert rules["fixed_n_of_a_kind"] == [1000, 2000, 4000]


def test_not_converged_exits_1_and_readers_refuse(tmp_path):
  out = _run("farkle_jax.main", *TINY, f"--workdir={tmp_path}",
             "--config.solver.max_iterations=1")
  _one_line(out, 1, "not converged", "max_iterations")
  table = _run("farkle_jax.apps.table", f"--workdir={tmp_path}")
  _one_line(table, 1, "did not converge", "--allow_unconverged")
  table = _run("farkle_jax.apps.table", f"--workdir={tmp_path}",
               "--allow_unconverged")
  assert table.returncode == 0 and "turn table" in table.stdout


@pytest.mark.parametrize("args, code, words", [
    (("--t_max=-100",), 2, ("--t_max=-100",)),
    (("--t_max=75",), 2, ("t_max=75",)),
    (("--b=25",), 2, ("b=25",)),
    (("--f=3",), 2, ("f=3",)),
])
def test_table_usage_errors(tiny_runs, args, code, words):
  workdir = tiny_runs("minimal")[3]
  _one_line(_run("farkle_jax.apps.table", f"--workdir={workdir}", *args), code,
            *words)


@pytest.mark.parametrize("damage, words", [
    ("no_workdir", ("does not exist",)),
    ("unfinished", ("unfinished solve",)),
    ("empty", ("no finished run",)),
    ("missing_start_values", ("start_values.npy is missing or damaged",)),
    ("truncated_start_values", ("start_values.npy is missing or damaged",)),
    ("missing_summary", ("unfinished solve",)),
    ("truncated_summary", ("summary.json is damaged",)),
])
def test_table_on_a_broken_workdir(tiny_runs, tmp_path, damage, words):
  workdir = str(tmp_path / "w")
  if damage != "no_workdir":
    shutil.copytree(tiny_runs("minimal")[3], workdir)
  if damage == "unfinished":
    os.remove(os.path.join(workdir, "summary.json"))
  if damage == "empty":
    shutil.rmtree(workdir)
    os.makedirs(workdir)
  for name in ("start_values.npy", "summary.json"):
    path = os.path.join(workdir, name)
    if damage == f"missing_{name.split('.')[0]}":
      os.remove(path)
    if damage == f"truncated_{name.split('.')[0]}":
      data = open(path, "rb").read()
      open(path, "wb").write(data[:len(data) // 2])
  _one_line(_run("farkle_jax.apps.table", f"--workdir={workdir}"), 1, *words)


def _peak_rss_of(module, *args) -> tuple[subprocess.CompletedProcess, int]:
  """Runs a module's main and returns its own peak RSS (bytes)."""
  # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child of
  # a large test process would report its parent's peak.
  code = ("import atexit, re, runpy, sys; "
          "atexit.register(lambda: print('PEAK', int(re.search("
          "r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])"
          " * 1024, file=sys.stderr)); "
          f"sys.argv = {[module] + list(args)!r}; "
          f"runpy.run_module({module!r}, run_name='__main__')")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=300)
  # No PEAK: the process was killed (or aborted) before its exit handlers.
  assert "PEAK " in out.stderr, (out.returncode, out.stderr[-3000:])
  peak = int(out.stderr.split("PEAK ")[1].split()[0])
  out.stderr = out.stderr.split("PEAK ")[0]
  return out, peak


@functools.lru_cache(maxsize=None)
def _runtime_peak() -> int:
  """The peak RSS (bytes) of a process that imports the package and
  starts JAX's backend, as a solve refused before anything big does: a
  CPU's runtime about 160 MB, a GPU's hundreds more (CUDA's libraries: a
  refused solve peaked at 621 MB on an H200)."""
  code = ("import re, jax, farkle_jax; jax.devices(); print(int(re.search("
          "r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])"
          " * 1024)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-3000:]
  return int(out.stdout.split()[-1])


def test_analysis_over_memory_is_refused_before_anything_big(tmp_path):
  out, peak = _peak_rss_of("farkle_jax.apps.analyze", "evaluate",
                           "--config=configs/facebook.py",
                           "--config.rules.goal=1000000",
                           "--strategy=maxscore", "--versus=bank:300")
  _one_line(out, 1, "per-key arrays", "needs about")
  assert peak < 600 * 2**20


@pytest.mark.parametrize("args, hint", [
    (("--config.rules.floor=-100000", "--config.memory_limit_gb=1"),
     "rules.floor=-"),
    (("--config.rules.goal=1000000",), "rules.goal="),
    (("--config.solver.method=value_iteration", "--config.memory_limit_gb=2"),
     "solver.method='ordered'"),
])
def test_memory_refusal_before_anything_big(tmp_path, args, hint):
  out, peak = _peak_rss_of("farkle_jax.main", "--config=configs/facebook.py",
                           f"--workdir={tmp_path}/w", *args)
  _one_line(out, 1, "needs about", hint)
  # The JAX runtime only (600 MB on a CPU); no table was built.
  assert peak < max(600 * 2**20, _runtime_peak() + 300 * 2**20)
  assert not os.path.exists(tmp_path / "w")


def test_second_solve_is_refused_and_a_killed_holder_is_taken_over(
    tmp_path):
  workdir = str(tmp_path)
  holder = subprocess.Popen(
      [sys.executable, "-c",
       "import sys, time; from farkle_jax.solver import locking; "
       f"lock = locking.WorkdirLock({workdir!r}).__enter__(); "
       "print('held', flush=True); time.sleep(600)"],
      cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True)
  assert holder.stdout.readline().strip() == "held"
  out = _run("farkle_jax.main", *TINY, f"--workdir={workdir}")
  _one_line(out, 1, "in use by another solve", f"pid {holder.pid}")
  holder.send_signal(signal.SIGKILL)
  holder.wait()
  out = _run("farkle_jax.main", *TINY, f"--workdir={workdir}")
  assert out.returncode == 0, out.stderr[-2000:]


@pytest.mark.parametrize("method", ["ordered", "value_iteration"])
def test_float32_runs_with_every_method(tmp_path, tiny_runs, method):
  out = _run("farkle_jax.main", *TINY, f"--workdir={tmp_path}",
             "--config.solver.dtype=float32", "--config.solver.tol=1e-6",
             f"--config.solver.method={method}")
  assert out.returncode == 0, out.stderr[-2000:]
  w32 = np.load(tmp_path / "start_values.npy")
  assert w32.dtype == np.float32
  w64 = tiny_runs("minimal")[0]
  assert np.abs(w32 - w64).max() < 2e-5


def test_no_line_about_a_missing_tpu(tiny_runs):
  """JAX probes for a TPU when JAX_PLATFORMS is unset and logs its absence;
  the entry points drop that line."""
  env = {k: v for k, v in ENV.items() if k != "JAX_PLATFORMS"}
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.table",
       f"--workdir={tiny_runs('minimal')[3]}"], cwd=ROOT, env=env,
      capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  assert "Unable to initialize backend" not in out.stderr


def test_a_flag_out_of_its_bounds_is_named():
  out = subprocess.run(
      [sys.executable, "experiments/sweep_cost.py", *TINY, "--sweeps=0"],
      cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
  _one_line(out, 2, "--sweeps=0", "not a positive integer")


def test_every_kind_of_failure_has_its_exit_code():
  from farkle_jax.apps import command_line as cl
  assert cl.classify(KeyboardInterrupt()) == (
      cl.INTERRUPTED_EXIT, cl.classify(KeyboardInterrupt())[1])
  assert "resumes" in cl.classify(KeyboardInterrupt())[1]
  try:  # an OS error wrapped by a library (Orbax, TensorStore) is one
    try:
      raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/w/x")
    except OSError as e:
      raise ValueError("RESOURCE_EXHAUSTED: long\nstory") from e
  except ValueError as e:
    assert cl.classify(e) == (cl.FAILURE_EXIT,
                              "No space left on device (/w/x)")
  assert cl.classify(zipfile.BadZipFile("File is not a zip file")) == (
      cl.FAILURE_EXIT, "a damaged file: File is not a zip file")
  assert cl.classify(MemoryError())[0] == cl.FAILURE_EXIT
  code, line = cl.classify(RuntimeError("a bug\nsecond line"))
  assert code == cl.INTERNAL_EXIT and "RuntimeError: a bug" in line
  assert "--verbose" in line and "\n" not in line
  # A long reason is said whole (a hand's dice can take 400 characters).
  reason = "rules.hands: " + ", ".join(f"die {i}: a face" for i in range(60))
  from farkle_jax.solver import configuration
  assert cl.classify(configuration.ConfigError(reason)) == (
      cl.USAGE_EXIT, reason)


@pytest.mark.parametrize("module, args, code, words", [
    ("farkle_jax.main", ("--config.rules.goal=1000000000000",), 2,
     ("rules.goal", "1,000,000,000")),
    ("farkle_jax.main", ("--config.rules.floor=-100000000000000000000",), 2,
     ("rules.floor",)),
    ("farkle_jax.main", ("--config.rules.penalty_count=1000000",), 2,
     ("penalty_count", "1 to 100")),
    ("farkle_jax.main", ("--config.rules.players=3",
                         "--config.rules.goal=1000000"), 1,
     ("needs about", "rules.goal=")),
    ("farkle_jax.main", ("--config.rules.players=6",), 1,
     ("would fit",)),
    ("farkle_jax.apps.analyze", ("simulate", "--games=1000000000"), 2,
     ("--games", "100,000,000")),
    ("farkle_jax.apps.analyze", ("maxscore", "--t_last=10" + "0" * 30), 2,
     ("--t_last", "to the goal")),
    ("farkle_jax.apps.analyze", ("komi", "--k_max=10" + "0" * 20), 2,
     ("--k_max",)),
    ("farkle_jax.apps.analyze",
     ("evaluate", "--strategy=bank:1000000000000"), 2,
     ("bank:1000000000000", "from 50 to the goal 1000")),
    ("farkle_jax.apps.analyze", ("simulate", "--versus=goforit:0,0,0,0,0,0/"
                                 "0,0,0,0,0,10" + "0" * 15), 2,
     ("goforit D", "from 0 to the goal 1000")),
])
def test_numbers_out_of_range_fail_at_once(tmp_path, module, args, code,
                                           words):
  """Refused in one line before any compute (the memory estimate of a
  huge game included: closed form)."""
  command, config = (), ("--config", "configs/default.py")
  if module == "farkle_jax.apps.analyze":
    command, args = args[:1], args[1:]
    config = ("--config", "configs/tiny.py:minimal")
  out = _run(module, *command, *config, *args, f"--workdir={tmp_path}/w",
             timeout=60)
  _one_line(out, code, *words)
  if code == 1 and "players=6" in " ".join(args):
    # no hint that would itself be refused
    assert "rules.players=5" not in out.stderr


def test_a_turn_total_beyond_the_game_for_three_players(three_players):
  out = _run("farkle_jax.apps.advise", f"--workdir={three_players}",
             "--t=10" + "0" * 100)
  _one_line(out, 2, "t=1", "from 0 to")


def test_the_same_damage_exits_the_same_for_two_and_three_players(
    tiny_runs, three_players, tmp_path):
  for name, run in (("two", tiny_runs("minimal")[3]),
                    ("three", three_players)):
    copy = tmp_path / name
    shutil.copytree(run, copy)
    (copy / "start_values.npy").write_bytes(b"not an array")
    args = ("--scores=0,0,0",) if name == "three" else ()
    _one_line(_run("farkle_jax.apps.table", f"--workdir={copy}", *args), 1,
              "damaged" if name == "two" else "no intact")


def test_a_flipped_byte_in_shipped_style_values_is_one_line(tmp_path):
  from farkle_jax.strategy import solved_game
  copy = tmp_path / "default"
  shutil.copytree(os.path.join(solved_game.DATA, "default"), copy)
  path = copy / "start_values.npz"
  data = bytearray(path.read_bytes())
  data[len(data) // 2] ^= 0xFF
  path.write_bytes(bytes(data))
  _one_line(_run("farkle_jax.apps.table", f"--workdir={copy}"), 1,
            "start_values.npz is missing or damaged")


def _uninterrupted(tiny_runs):
  """Start values of the same config solved without a stop (the session's
  fixture): the tiny Facebook game, 13 sweeps, a checkpoint after each."""
  return np.load(os.path.join(tiny_runs("facebook")[3], "start_values.npy"))


FAULT_RUN = ("--config", "configs/tiny.py:facebook",
             "--config.checkpoint.every=1", "--config.solver.sweeps_per_call=1")


def test_ctrl_c_is_one_line_and_the_rerun_is_exact(tmp_path, tiny_runs):
  args = (*FAULT_RUN, f"--workdir={tmp_path}")
  # SIGINT as a terminal sends it, even where this test runs in the
  # background (a shell starts background jobs with SIGINT ignored).
  solve = subprocess.Popen(
      [sys.executable, "-m", "farkle_jax.main", *args], cwd=ROOT, env=ENV,
      stderr=subprocess.PIPE, text=True,
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  for _ in range(1200):   # interrupted once its second sweep is saved
    if (tmp_path / "checkpoints" / "2").exists() or solve.poll() is not None:
      break
    time.sleep(0.1)
  solve.send_signal(signal.SIGINT)
  _, err = solve.communicate(timeout=120)
  out = subprocess.CompletedProcess(solve.args, solve.returncode, "", err)
  _one_line(out, 130, "interrupted", "resumes")
  rerun = _run("farkle_jax.main", *args)
  assert rerun.returncode == 0, rerun.stderr[-2000:]
  np.testing.assert_array_equal(np.load(tmp_path / "start_values.npy"),
                                _uninterrupted(tiny_runs))
  assert not list(tmp_path.glob("*.tmp*"))


_HANGS_AT_EXIT = """
import atexit, threading, time
from farkle_jax.apps import command_line
command_line.EXIT_GRACE_S = 0.5
def main(argv):
  threading.Thread(target=threading.Event().wait).start()  # never ends
  atexit.register(time.sleep, 600)
  raise KeyboardInterrupt
command_line.run(main)
"""


def test_a_shutdown_that_hangs_still_ends_with_the_commands_code():
  """A library thread left waiting (as a Ctrl-C can leave one of an
  asynchronous save) and a slow exit hook do not keep a command alive
  once it has said its line."""
  start = time.monotonic()
  out = subprocess.run([sys.executable, "-c", _HANGS_AT_EXIT], cwd=ROOT,
                       env=ENV, capture_output=True, text=True, timeout=60)
  assert time.monotonic() - start < 30
  _one_line(out, 130, "interrupted", "resumes")


# A second random moment in the thorough tier.
@pytest.mark.parametrize("seed", [
    1, pytest.param(2, marks=pytest.mark.thorough)])
def test_sigkill_at_a_random_moment_then_rerun_is_exact(tmp_path, seed,
                                                       tiny_runs):
  """Killed anywhere (compiling, sweeping, saving, writing the results: the
  whole run takes about 3 s here): the rerun ends at the values of an
  uninterrupted solve, bit for bit, with nothing left over."""
  args = (*FAULT_RUN, f"--workdir={tmp_path}")
  solve = subprocess.Popen([sys.executable, "-m", "farkle_jax.main", *args],
                           cwd=ROOT, env=ENV, stderr=subprocess.DEVNULL)
  time.sleep(np.random.default_rng(seed).uniform(0.8, 3.0))
  solve.send_signal(signal.SIGKILL)
  solve.wait()
  rerun = _run("farkle_jax.main", *args)
  assert rerun.returncode == 0, rerun.stderr[-2000:]
  np.testing.assert_array_equal(np.load(tmp_path / "start_values.npy"),
                                _uninterrupted(tiny_runs))
  leftovers = [p for p in tmp_path.rglob("*") if "tmp" in p.name]
  assert not leftovers, leftovers
