"""Runs: resume after SIGKILL, refusals before compute, memory estimate."""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import COMMANDS, _run_root
from farkle_jax.solver import configuration, driver, memory
from configs import tiny

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAIN = [sys.executable, "-m", "farkle_jax.main",
        "--config", "configs/tiny.py:facebook",
        "--config.checkpoint.every=1", "--config.solver.sweeps_per_call=1"]


def _main(workdir, method, devices: int = 1, extra=()):
  """The solve as its own process (one we can kill), on `devices` forced
  host devices."""
  os.makedirs(workdir, exist_ok=True)
  log = open(os.path.join(workdir, "log.txt"), "a")
  env = dict(os.environ)
  if devices > 1:  # forced host devices: a CPU mesh of that size
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        f" --xla_force_host_platform_device_count={devices}")
  return subprocess.Popen(MAIN + [f"--workdir={workdir}",
                                  f"--config.solver.method={method}", *extra],
                          cwd=ROOT,
                          stdout=log, stderr=subprocess.STDOUT, env=env)


def _solve(workdir, method, devices: int = 1, extra=()) -> None:
  """The solve to its end. On one device it is forked from a worker that
  has imported JAX (conftest.CommandLines): a process of its own, as
  `python -m` runs it, without the 2 s of a start-up."""
  if devices > 1:
    assert _main(workdir, method, devices, extra).wait(timeout=300) == 0
    return
  out = COMMANDS(*MAIN[2:], f"--workdir={workdir}",
                 f"--config.solver.method={method}", *extra)
  assert out.returncode == 0, out.stderr[-3000:]


def _steps(workdir):
  d = os.path.join(workdir, "checkpoints")
  return [int(x) for x in os.listdir(d) if x.isdigit()] if os.path.isdir(d) else []


def _once(tmp_path_factory, name: str, make) -> str:
  """The folder `name` of this test run, made once by `make(folder)`: the
  pytest-xdist workers share it (the first to ask makes it, under a lock;
  the others wait and read it), as conftest.solved_once shares a solve."""
  root = _run_root(tmp_path_factory)
  done = root / name
  with open(root / f"{name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not done.exists():
      part = root / f"{name}.part"
      shutil.rmtree(part, ignore_errors=True)
      make(str(part))
      os.rename(part, done)
  return str(done)


def _kill_at(workdir, method, kill_at, devices) -> None:
  """A run SIGKILLed once it has saved checkpoint `kill_at` (or later)."""
  proc = _main(workdir, method, devices)
  deadline = time.time() + 240
  while max(_steps(workdir), default=0) < kill_at:
    assert proc.poll() is None, "run finished before it could be killed"
    assert time.time() < deadline
    time.sleep(0.02)
  proc.send_signal(signal.SIGKILL)
  proc.wait()
  assert not os.path.exists(os.path.join(workdir, "summary.json"))


# One device to four and four to one in the thorough tier: four to two
# shows a resume on other devices.
@pytest.mark.parametrize("method,kill_at,devices", [
    ("value_iteration", 10, (1, 1)), ("ordered", 4, (1, 1)),
    pytest.param("ordered", 4, (1, 4), marks=pytest.mark.thorough),
    pytest.param("ordered", 4, (4, 1), marks=pytest.mark.thorough),
    ("ordered", 4, (4, 2))],
    ids=lambda x: f"{x[0]}to{x[1]}" if isinstance(x, tuple) else None)
def test_resume_after_sigkill_gives_identical_values(tmp_path_factory,
                                                     tmp_path, method,
                                                     kill_at, devices):
  """Killed on devices[0] devices, resumed on devices[1]: the values of an
  uninterrupted one-device run, bit for bit. The uninterrupted run, and
  the killed run of each (method, kill_at, devices[0]), are made once
  (this run's workers share them); each test resumes a copy of the killed
  workdir, all of it (locks and half-written saves included)."""
  # No checkpoints to write: they change nothing in the values.
  whole = _once(tmp_path_factory, f"whole_{method}", lambda w: _solve(
      w, method, extra=("--config.checkpoint.every=100000",)))
  shared = _once(tmp_path_factory,
                 f"killed_{method}_{kill_at}_on_{devices[0]}",
                 lambda w: _kill_at(w, method, kill_at, devices[0]))
  killed = str(tmp_path / "killed")
  shutil.copytree(shared, killed)
  _solve(killed, method, devices[1])
  resumed = json.load(open(os.path.join(killed, "summary.json")))
  base = json.load(open(os.path.join(whole, "summary.json")))
  assert resumed["resumed_from"] >= kill_at
  assert resumed["iterations"] == base["iterations"]
  assert resumed["residual_history"] == base["residual_history"]
  assert np.array_equal(np.load(os.path.join(killed, "start_values.npy")),
                        np.load(os.path.join(whole, "start_values.npy")))


def test_checkpoint_of_other_rules_is_refused(tmp_path):
  config = tiny.get_config("facebook")
  config.solver.max_iterations = 2
  with pytest.raises(driver.NotConverged):
    driver.run(config, str(tmp_path))
  config.rules.floor = -250
  with pytest.raises(Exception, match="rules.floor: checkpoint -500, this run -250"):
    driver.run(config, str(tmp_path))


@pytest.mark.parametrize("field,value,match", [
    ("solver.norm", "l2", r"config.solver.norm = 'l2'.*relative"),
    ("solver.tol", -1.0, r"config.solver.tol = -1.0"),
    ("solver.method", "magic", r"config.solver.method"),
    ("solver.dtype", "float16", r"config.solver.dtype"),
    ("solver.dtype", "float32", r"config.solver.tol = 1e-14.*float32"),
    ("checkpoint.every", 0, r"config.checkpoint.every = 0"),
    ("rules.goal", 1025, r"config.rules.goal = 1025.*multiple of step=50"),
    ("rules.floor", 250, r"config.rules.floor = 250"),
    ("slices", ((0, 0, 5, 0),), r"config.slices.*f in \[0, 2\]"),
    ("slices", (("a", 0, 0, 0),), r"config.slices.*of integers"),
    ("slices", ((0.7, 0, 0, 0),), r"config.slices.*of integers"),
])
def test_bad_config_fails_before_compute(tmp_path, field, value, match):
  config = tiny.get_config("facebook")
  section, _, name = field.rpartition(".")
  setattr(config[section] if section else config, name, value)
  with pytest.raises(configuration.ConfigError, match=match):
    driver.run(config, str(tmp_path / "w"))
  assert not os.path.exists(tmp_path / "w")


def test_run_that_cannot_fit_is_refused_with_a_setting_that_would(tmp_path):
  config = tiny.get_config("facebook")
  config.rules.goal = 10_000
  config.rules.floor = -10_000
  config.solver.method = "value_iteration"  # the full state array
  config.memory_limit_gb = 12.0
  with pytest.raises(memory.MemoryRefused, match=r"rules.floor=-\d+"):
    driver.run(config, str(tmp_path / "w"))
  assert not os.path.exists(tmp_path / "w")


def test_ensure_loads_a_finished_run_without_solving(tiny_runs, monkeypatch):
  w0, layout, _, workdir = tiny_runs("minimal")
  def fail(*a, **k):
    raise AssertionError("solved again")
  monkeypatch.setattr(driver, "run", fail)
  again, lay, _, summary = driver.ensure(tiny.get_config("minimal"), workdir)
  np.testing.assert_array_equal(again, w0)
  assert summary["converged"]
  other = tiny.get_config("minimal")
  other.rules.goal = 1500          # other rules: must solve, not load
  with pytest.raises(AssertionError, match="solved again"):
    driver.ensure(other, workdir)


def test_wavefront_run_reports_its_steps_and_matches_ordered(tmp_path):
  runs = {}
  for method in ("wavefront", "ordered"):
    config = tiny.get_config("facebook")
    # Smaller than tiny: the wavefront's gathers are slow on a CPU.
    config.rules.update(goal=600, floor=-250)
    config.solver.method = method
    # The ordered method's sub-batches of 16 banked scores (its default on
    # a CPU) on any backend: an accelerator's default, one a stage, takes
    # fewer dependent steps (430 a sweep here, against 535).
    config.solver.b_group = 16
    runs[method] = driver.run(config, str(tmp_path / method))
  wave, ordered = runs["wavefront"], runs["ordered"]
  assert wave["method"] == "wavefront" and wave["converged"]
  assert wave["first_player_win"] == pytest.approx(
      ordered["first_player_win"], abs=1e-13)
  assert wave["state_updates"] == wave["iterations"] * wave["model_states"]
  assert 0 < wave["dependent_steps_per_sweep"] * 10 < ordered[
      "dependent_steps_per_sweep"]
