"""Several processes, one solve: flags checked before anything starts, and
two processes on localhost (2 forced CPU devices each) give the values of
one process, with process 0 the only writer."""

import os
import socket
import subprocess
import sys

import jax
import numpy as np
import pytest

from conftest import COMMANDS
from farkle_jax.apps import cluster
from farkle_jax.solver import placement

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("args, match", [
    (("node0:1234", None, None), "go together"),
    ((None, 2, 0), "go together"),
    (("node0", 2, 0), "expected HOST:PORT"),
    (("node0:1234", 2, 2), "expected 0..1"),
])
def test_incomplete_or_inconsistent_flags_are_refused(args, match):
  with pytest.raises(cluster.ClusterError, match=match):
    cluster.start(*args)


def test_no_flags_is_a_single_process():
  assert cluster.start(None, None, None) is False
  assert placement.is_writer()


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def _solve(workdir, method, extra=(), env_extra=None,
           config="configs/tiny.py:facebook"):
  env = {**os.environ, **(env_extra or {})}
  return subprocess.Popen(
      [sys.executable, "-m", "farkle_jax.main", "--config",
       config, f"--workdir={workdir}", "--progress=log",
       f"--config.solver.method={method}", *extra],
      cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      text=True)


# The processes' forced host devices: the CPU backend whatever the suite's
# (with JAX_PLATFORMS=cuda each process took the one GPU of an H200
# machine, and both aborted in their first exchange).
ON_CPU = {"JAX_PLATFORMS": "cpu"}
TWO_DEVICES = {**ON_CPU,
               "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}


def _one_process(tmp_path, method, tiny_runs) -> str:
  """The workdir of a one-process solve of the same config: the session's
  (auto is the ordered method on a CPU), else solved here, in this
  process (one device); where the suite runs on an accelerator (which
  rounds otherwise), in a process of one CPU device."""
  if jax.default_backend() != "cpu":
    proc = _solve(tmp_path / "one", method, (), ON_CPU)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return str(tmp_path / "one")
  if method == "ordered":
    return tiny_runs("facebook")[3]
  from configs import tiny
  from farkle_jax.solver import driver
  config = tiny.get_config("facebook")
  config.solver.method = method
  driver.run(config, str(tmp_path / "one"))
  return str(tmp_path / "one")


# Value iteration in the thorough tier: the ordered method's exchanges are
# the ones between processes that matter most (stages, shards).
@pytest.mark.parametrize("method", [
    "ordered", pytest.param("value_iteration", marks=pytest.mark.thorough)])
def test_two_processes_give_the_values_of_one(tmp_path, method, tiny_runs):
  one = _one_process(tmp_path, method, tiny_runs)
  port = _free_port()
  procs = [_solve(tmp_path / "two", method,
                  (f"--coordinator=localhost:{port}", "--num_processes=2",
                   f"--process_id={i}"), TWO_DEVICES) for i in range(2)]
  outs = [p.communicate(timeout=600) for p in procs]
  for p, (_, err) in zip(procs, outs):
    assert p.returncode == 0, err[-3000:]
  assert "first-player win probability: 0.604836" in outs[0][0]
  # Process 1 prints no result (Gloo's own connection lines aside).
  assert "first-player" not in outs[1][0] and "turn table" not in outs[1][0]
  np.testing.assert_array_equal(
      np.load(tmp_path / "two" / "start_values.npy"),
      np.load(os.path.join(one, "start_values.npy")))


def test_three_players_over_two_processes_give_the_values_of_one(tmp_path):
  """The seat engine across two processes of two devices each (its tables
  split over the four by sub-batch, the values whole on each), under a
  penalty (two sweeps and a Newton step, blocks solved across the
  devices): bit for bit the values of one process."""
  three = ("--config.rules.players=3", "--config.rules.goal=400",
           "--config.rules.floor=-200")
  port = _free_port()
  procs = [_solve(tmp_path / "two", "auto",
                  (*three, f"--coordinator=localhost:{port}",
                   "--num_processes=2", f"--process_id={i}"), TWO_DEVICES)
           for i in range(2)]
  outs = [p.communicate(timeout=600) for p in procs]
  for p, (_, err) in zip(procs, outs):
    assert p.returncode == 0, err[-3000:]
  assert "seat 1: 0.723007566" in outs[0][0]
  assert "seat 1" not in outs[1][0]
  from configs import tiny
  from farkle_jax.solver import driver
  config = tiny.get_config("facebook")
  config.rules.update(players=3, goal=400, floor=-200)
  driver.run(config, str(tmp_path / "one"))
  two, one = (np.load(tmp_path / name / "start_values.npy")
              for name in ("two", "one"))
  if jax.default_backend() == "cpu":
    np.testing.assert_array_equal(two, one)
  else:  # the two processes run on CPUs, this one on the accelerator
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-14)


MINIMAL = "configs/tiny.py:minimal"


def test_the_n_player_wavefront_over_two_processes_gives_one_s_values(
    tmp_path):
  """Three players' wavefront with its columns split over two processes
  of two devices each (the rings, the finishing groups' reads and the
  moves across them): bit for bit the values of one process. A small
  game: Gloo between processes on one host is slow (three players to 400
  take 38 s so, 24 s in one process)."""
  game = ("--config.rules.players=3", "--config.rules.goal=300")
  port = _free_port()
  procs = [_solve(tmp_path / "two", "wavefront", (
      *game, f"--coordinator=localhost:{port}", "--num_processes=2",
      f"--process_id={i}"), TWO_DEVICES, MINIMAL) for i in range(2)]
  outs = [p.communicate(timeout=600) for p in procs]
  for p, (_, err) in zip(procs, outs):
    assert p.returncode == 0, err[-3000:]
  assert "seat 1: 0.835323135" in outs[0][0]
  one = _solve(tmp_path / "one", "wavefront", game, ON_CPU, MINIMAL)
  _, err = one.communicate(timeout=600)
  assert one.returncode == 0, err[-3000:]
  np.testing.assert_array_equal(
      np.load(tmp_path / "two" / "start_values.npy"),
      np.load(tmp_path / "one" / "start_values.npy"))


def test_two_processes_stopped_and_rerun_resume_from_their_checkpoint(
    tmp_path, tiny_runs):
  one = _one_process(tmp_path, "ordered", tiny_runs)
  for limit in (6, 1000):  # stopped at sweep 6 (not converged), then rerun
    port = _free_port()
    # Chunks of 3 sweeps (checkpoint.every), saved at 3 and 6: the program
    # of the test above (the same sweeps_per_call), which the compile cache
    # then holds for the processes of both tests.
    procs = [_solve(tmp_path / "two", "ordered",
                    (f"--coordinator=localhost:{port}", "--num_processes=2",
                     f"--process_id={i}",
                     f"--config.solver.max_iterations={limit}",
                     "--config.checkpoint.every=3"), TWO_DEVICES)
             for i in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = {p.returncode for p in procs}
    assert codes == ({1} if limit == 6 else {0}), outs[0][1][-3000:]
  # The rerun's log records, in the workdir's log (process 0 writes it).
  assert "resumed from checkpoint 6" in (tmp_path / "two" / "log.txt"
                                         ).read_text()
  np.testing.assert_array_equal(
      np.load(tmp_path / "two" / "start_values.npy"),
      np.load(os.path.join(one, "start_values.npy")))


@pytest.mark.parametrize("flags, expected", [
    (("--coordinator=node0", "--num_processes=2", "--process_id=0"),
     "error: --coordinator=node0: expected HOST:PORT"),
    (("--coordinator=node0:1", "--num_processes=2"), "go together"),
    (("--num_processes=0",), "error: --num_processes=0: "),
    (("--progress=fancy",), "error: --progress=fancy: "),
])
def test_bad_cluster_or_progress_flags_fail_in_one_line(tmp_path, flags,
                                                        expected):
  # Forked from a worker that has imported JAX (conftest.CommandLines),
  # as `python -m` runs it: a refusal costs no start-up of its own.
  out = COMMANDS("farkle_jax.main", "--config", "configs/tiny.py:facebook",
                 f"--workdir={tmp_path}/w", *flags)
  lines = [l for l in out.stderr.splitlines() if l.startswith("error:")]
  assert out.returncode == 2 and len(lines) == 1 and expected in lines[0]
  assert "Traceback" not in out.stderr
  assert not os.path.exists(tmp_path / "w")  # refused before anything
