"""The N-player solve (`driver.run` with its stage engine) as a user runs
it: the main job, its results, resuming (also from within a sweep), and bad
input refused in one line before any compute."""

import os
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

from conftest import COMMANDS, ROOT, crash_in_sweeps
from farkle_jax.solver import configuration, driver, results
from farkle_jax.solver import seat_sweep, stage_engine
from farkle_jax.solver.driver import NotConverged
from farkle_jax.solver.memory import MemoryRefused

TINY = ["--config", "configs/tiny.py:minimal", "--config.rules.players=3",
        "--config.rules.goal=500"]


def _main(*args):
  """`python -m farkle_jax.main args`, forked from a worker that has
  imported JAX once (conftest.CommandLines): a start-up of its own each
  would cost 1-2 s."""
  return COMMANDS("farkle_jax.main", *args)


def test_main_solves_three_players_and_resumes(tmp_path):
  workdir = str(tmp_path)
  out = _main(*TINY, "--workdir", workdir)
  assert out.returncode == 0, out.stderr
  assert "seat 3:" in out.stdout and "converged: 2 sweeps" in out.stdout
  w = np.load(os.path.join(workdir, "start_values.npy"))
  assert w.shape == (10, 10, 10, 1, 1, 1, 3)
  first = out.stdout.splitlines()[1]
  assert first == f"  seat 1: {w[0, 0, 0, 0, 0, 0, 0]:.9f}"
  again = _main(*TINY, "--workdir", workdir)
  assert again.returncode == 0, again.stderr
  with open(os.path.join(workdir, "log.txt")) as f:   # the run's records
    assert "resumed from checkpoint" in f.read()
  assert again.stdout.splitlines()[:4] == out.stdout.splitlines()[:4]


def test_a_crash_within_a_sweep_loses_nothing(tmp_path, monkeypatch,
                                             unsettled_game):
  """Stopped in the last sweep after the stage of its one unsettled cycle:
  the resumed run has the values and the count of unsettled keys of an
  uninterrupted one."""
  config, fresh, _ = unsettled_game
  assert fresh["unsettled_keys"] == 3
  stages = len(stage_engine.check(config)[0].stage_sizes())
  crash = stages + stages * 3 // 4
  # A checkpoint after each of the last stages before the crash (more than
  # checkpoint.keep: old ones go): the one it resumes from is that of the
  # stage before it, as with a save after every stage (a save costs 50 ms;
  # one after each stage of both sweeps took 6 s).
  restore_step = crash_in_sweeps(monkeypatch, seat_sweep,
                                 "compiled_steps", save_from=crash - 3,
                                 crash_at=crash)
  workdir = str(tmp_path / "crash")
  with pytest.raises(KeyboardInterrupt):
    driver.run(config, workdir)
  restore_step()
  summary = driver.run(config, workdir)
  np.testing.assert_allclose(summary["seat_win"], fresh["seat_win"],
                             rtol=0, atol=1e-15)
  assert summary["iterations"] == 2
  assert summary["unsettled_keys"] == fresh["unsettled_keys"]
  assert summary["unsettled_apart"] == fresh["unsettled_apart"]


def test_a_run_resumes_with_another_sub_batch_size(tmp_path, monkeypatch):
  """Stopped at max_iterations, a run saves where it stands; the sub-batch
  size (`stage_engine.group_size`: here 32 keys on a CPU, `chunk_keys`
  on an accelerator; then 16) is not part of what a checkpoint must
  match, so the rerun goes on from there."""
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3)
  config.solver.update(tol=1e-14, norm="absolute", max_iterations=1)
  with pytest.raises(NotConverged, match="not converged: 1 sweeps"):
    driver.run(config, str(tmp_path))
  restore, found = stage_engine.StageEngine.restore, []
  monkeypatch.setattr(stage_engine.StageEngine, "restore",
                      lambda *a: found.append(restore(*a)) or found[-1])
  seats, settings = stage_engine.check(config)
  assert stage_engine.group_size(settings, seats) > 16
  config.solver.update(max_iterations=50, chunk_keys=16)
  summary = driver.run(config, str(tmp_path))
  assert found[0].iteration == 1     # resumed after the first sweep
  assert summary["iterations"] == 2 and summary["converged"]


@pytest.mark.parametrize("preset, goal, players, keys, per_score", [
    ("facebook", 3000, 2, 32, 10.3), ("minimal", 500, 3, 32, 5.3),
    ("minimal", 2000, 3, 64, 20.3), ("facebook", 1000, 3, 256, 787.5)])
def test_a_cpu_sub_batch_spans_about_one_banked_score(preset, goal, players,
                                                      keys, per_score):
  """On a CPU a sub-batch holds a power of two near twice a stage's keys
  per mover's score, 32 to 256: its keys then start their turns at about
  one banked score and pad few rows (on an accelerator: `chunk_keys`)."""
  config = configuration.base(preset)
  config.rules.update(goal=goal, players=players)
  seats, settings = stage_engine.check(config)
  counts = seats.stage_scores()
  assert counts[counts > 0].mean() == pytest.approx(per_score, abs=0.1)
  assert stage_engine.group_size(settings, seats, "cpu") == keys
  assert stage_engine.group_size(settings, seats, "gpu") == (
      settings.chunk_keys)
  settings = settings._replace(chunk_keys=16)
  assert stage_engine.group_size(settings, seats, "cpu") == 16


@pytest.mark.parametrize("flag, says", [
    ("--config.rules.players=7", "config.rules.players = 7 is not allowed"),
    ("--config.solver.method=value_iteration",
     "'auto', 'ordered', 'seats' or 'wavefront' with"),
    ("--config.rules.hands=((),(0.26,0.12,0.12,0.12,0.26,0.12))",
     "one hand per player (3)"),
])
def test_bad_input_is_refused_in_one_line(tmp_path, flag, says):
  out = _main(*TINY, *flag.split(), "--workdir", str(tmp_path))
  assert out.returncode == 2
  assert out.stderr.strip().splitlines() == [out.stderr.strip()]
  assert says in out.stderr and out.stderr.startswith("error:")
  assert not os.listdir(tmp_path)


def test_not_converged_exits_1_in_one_line_and_readers_refuse(tmp_path):
  out = _main(*TINY, "--config.solver.max_iterations=1", "--workdir",
              str(tmp_path))
  errors = [l for l in out.stderr.splitlines() if l.startswith("error:")]
  assert out.returncode == 1 and "Traceback" not in out.stderr
  assert len(errors) == 1 and errors[0].startswith(
      "error: not converged: 1 sweeps")
  out = COMMANDS("farkle_jax.apps.table", "--workdir", str(tmp_path))
  assert out.returncode != 0 and "allow_unconverged" in out.stderr


def test_a_solve_that_cannot_fit_is_refused_with_a_setting_that_would():
  config = configuration.base("minimal")
  config.rules.players = 4
  config.memory_limit_gb = 1.0
  seats, settings = stage_engine.check(config)
  with pytest.raises(MemoryRefused, match=r"rules\.goal=\d+ or lower"):
    stage_engine.plan_memory(seats, settings, 512)


def test_a_refusal_hints_only_at_valid_goals():
  """Nothing fits: no hint at all (a goal under the bank minimum would be
  a rule error, and three players do not fit either)."""
  config = configuration.base("facebook")
  config.rules.update(players=4, goal=2100)
  config.memory_limit_gb = 0.01
  seats, settings = stage_engine.check(config)
  with pytest.raises(MemoryRefused, match="would fit: none") as refused:
    stage_engine.plan_memory(seats, settings, 512)
  assert "rules." not in str(refused.value)


def test_host_devices_each_count_against_the_one_memory(monkeypatch):
  """A CPU's devices share the host's memory: a solve whose estimate fits
  it on one device is refused on two host devices that each hold as much
  (three players to 2,000 on two of this machine's devices peaked at
  15.1 GB against a 9.4 GB estimate of one device's share)."""
  config = configuration.base("facebook")
  config.rules.update(players=3, goal=1000, floor=-500)
  config.solver.newton = False
  seats, settings = stage_engine.check(config)
  one = stage_engine.footprint(seats, 512, 1)[1]
  config.memory_limit_gb = 1.3 * one / 0.8 / 2**30
  seats, settings = stage_engine.check(config)
  stage_engine.plan_memory(seats, settings, 512)   # fits: no raise
  monkeypatch.setattr(jax, "device_count", lambda: 2)
  with pytest.raises(MemoryRefused, match="available|memory_limit_gb"):
    stage_engine.plan_memory(seats, settings, 512)


@pytest.mark.parametrize("preset, players, goal, limit, offers", [
    ("facebook", 4, 10_000, 1.0, False), ("facebook", 3, 1_000_000, 2.0, True),
    ("minimal", 5, 10_000, 4.0, True), ("facebook", 6, 10_000, 20.0, False),
    ("facebook", 3, 3000, 3.0, True)])
def test_every_setting_a_refusal_offers_fits(preset, players, goal, limit,
                                             offers):
  config = configuration.base(preset)
  config.rules.update(players=players, goal=goal)
  config.memory_limit_gb = limit
  seats, settings = stage_engine.check(config)
  with pytest.raises(MemoryRefused) as refused:
    stage_engine.plan_memory(seats, settings, 512)
  hints = re.findall(r"rules\.(\w+)=(-?\d+)", str(refused.value))
  assert bool(hints) == offers, str(refused.value)
  for field, value in hints:
    hinted = config.copy_and_resolve_references()
    hinted.rules[field] = int(value)
    seats, settings = stage_engine.check(hinted)
    stage_engine.plan_memory(seats, settings, 512)   # fits: no raise


def test_two_devices_give_the_values_of_one(tmp_path, three_players):
  """The sub-batches of a stage split over two (host) devices. One device:
  the session's solve of the same game (conftest: TINY's rules, tolerance
  and norm, and on a CPU its sub-batches of 256 keys), not solved again,
  where the session runs on a CPU; else solved here on one CPU device."""
  # Host devices: the CPU backend whatever the suite's (with
  # JAX_PLATFORMS=cuda the process would have the one GPU).
  cpu = dict(os.environ, JAX_PLATFORMS="cpu")
  two_devices = dict(cpu,
                     XLA_FLAGS="--xla_force_host_platform_device_count=2")
  two = str(tmp_path / "two")
  out = subprocess.run([sys.executable, "-m", "farkle_jax.main", *TINY,
                        "--workdir", two], cwd=ROOT, capture_output=True,
                       text=True, env=two_devices)
  assert out.returncode == 0, out.stderr
  with open(os.path.join(two, "log.txt")) as f:   # the run's log records
    assert "backend cpu, 2 device(s)" in f.read()
  one = three_players
  if jax.default_backend() != "cpu":   # an accelerator rounds otherwise
    one = str(tmp_path / "one")
    out = subprocess.run([sys.executable, "-m", "farkle_jax.main", *TINY,
                          "--workdir", one], cwd=ROOT, capture_output=True,
                         text=True, env=cpu)
    assert out.returncode == 0, out.stderr
  ran, fixed = (results.read_summary(w) for w in (two, one))
  for field in ("rules", "tol", "norm", "iterations"):
    assert ran[field] == fixed[field], field
  a = np.load(os.path.join(one, "start_values.npy"))
  b = np.load(os.path.join(two, "start_values.npy"))
  assert np.array_equal(a, b)
