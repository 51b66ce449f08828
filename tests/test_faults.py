"""Fault injection: every fault ends in the exact result or a refusal.

A tiny game is solved once with a checkpoint after every sweep; each test
copies that workdir, breaks something (bytes of each checkpoint file, a
truncated or missing part, a killed save, a NaN, a second solve, a full
disk), solves again and accepts exactly two outcomes: the start values of
the uninterrupted run, bit for bit, or one of the refusals of the package.
"""

import asyncio
import contextlib
import errno
import gc
import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, solved_once
from farkle_jax.solver import checkpointing, driver, locking
from farkle_jax.solver import methods, results
from configs import tiny

# A restore that fails inside Orbax leaves its read coroutines unawaited;
# Python reports them at garbage collection. Nothing of ours is hidden.
pytestmark = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning")

REFUSALS = (checkpointing.CheckpointMismatch, driver.SolveFault,
            results.ResultsError, locking.WorkdirLocked)


def _config():
  config = tiny.get_config("facebook")
  config.checkpoint.every = 1
  config.checkpoint.keep = 3
  config.solver.sweeps_per_call = 1
  return config


@pytest.fixture(scope="module")
def base(tmp_path_factory):
  """The uninterrupted run: (workdir, start values, last step). Solved
  once for this test run (pytest-xdist workers share it); every test
  copies it or only reads it."""
  workdir = solved_once(tmp_path_factory, "faults_base", _config())
  summary = results.read_summary(workdir)
  return workdir, np.load(os.path.join(workdir, "start_values.npy")), \
      summary["iterations"]


def _copy(base, tmp_path) -> str:
  """The base workdir with its checkpoints only (results removed)."""
  workdir = str(tmp_path / "w")
  shutil.copytree(base[0], workdir)
  for name in ("summary.json", "start_values.npy"):
    os.remove(os.path.join(workdir, name))
  return workdir


def _step_files(base) -> list[str]:
  step = os.path.join(base[0], "checkpoints", str(base[2]))
  return sorted(os.path.relpath(os.path.join(d, f), step)
                for d, _, files in os.walk(step) for f in files)


def _exact_or_refused(workdir, base) -> str:
  try:
    driver.run(_config(), workdir)
  except REFUSALS as e:
    assert "\n" not in str(e)
    return "refused"
  w0 = np.load(os.path.join(workdir, "start_values.npy"))
  np.testing.assert_array_equal(w0, base[1])
  return "exact"


def _flip(path: str) -> None:
  data = bytearray(open(path, "rb").read())
  data[len(data) // 2] ^= 0xFF
  open(path, "wb").write(bytes(data))


def _truncate(path: str) -> None:
  data = open(path, "rb").read()
  open(path, "wb").write(data[:len(data) // 2])


# A deleted file in the thorough tier: a flipped or a cut one is the harder
# case to notice.
@pytest.mark.parametrize("fault", [
    "flip", "truncate", pytest.param("delete", marks=pytest.mark.thorough)])
def test_damaged_checkpoint_files_never_give_a_wrong_answer(base, tmp_path,
                                                            fault):
  files = _step_files(base)
  assert len(files) >= 8  # metadata, manifests, data: every kind Orbax writes
  outcomes = {}
  for i, rel in enumerate(files):
    workdir = _copy(base, tmp_path / str(i))
    path = os.path.join(workdir, "checkpoints", str(base[2]), rel)
    {"flip": _flip, "truncate": _truncate, "delete": os.remove}[fault](path)
    outcomes[rel] = _exact_or_refused(workdir, base)
  # The data files must have been caught and fallen back on, not refused.
  data = [r for r in files if "/d/" in r]
  assert data and all(outcomes[r] == "exact" for r in data), outcomes


def test_damaged_checkpoint_is_set_aside_and_the_previous_one_used(
    base, tmp_path, caplog):
  workdir = _copy(base, tmp_path)
  step = os.path.join(workdir, "checkpoints", str(base[2]))
  data = [os.path.join(d, f) for d, _, fs in os.walk(step) for f in fs
          if "/d/" in os.path.join(d, f)]
  for path in data:
    _flip(path)
  assert _exact_or_refused(workdir, base) == "exact"
  summary = results.read_summary(workdir)
  assert summary["resumed_from"] == base[2] - 1
  assert os.listdir(os.path.join(workdir, "damaged_checkpoints"))
  assert any("is damaged" in r.getMessage() for r in caplog.records)


def test_every_checkpoint_damaged_starts_over(base, tmp_path):
  workdir = _copy(base, tmp_path)
  ckpts = os.path.join(workdir, "checkpoints")
  for step in os.listdir(ckpts):
    os.remove(os.path.join(ckpts, step, "meta", "metadata"))
  assert _exact_or_refused(workdir, base) == "exact"
  assert results.read_summary(workdir)["resumed_from"] is None


def test_killed_save_leaves_a_tmp_directory_that_is_ignored(base, tmp_path):
  workdir = _copy(base, tmp_path)
  ckpts = os.path.join(workdir, "checkpoints")
  tmp = os.path.join(ckpts, f"{base[2] + 1}.orbax-checkpoint-tmp-1234")
  shutil.copytree(os.path.join(ckpts, str(base[2])), tmp)
  for d, _, fs in os.walk(tmp):
    for f in fs:
      _truncate(os.path.join(d, f))
  assert _exact_or_refused(workdir, base) == "exact"


def _meta(workdir, step):
  path = os.path.join(workdir, "checkpoints", str(step), "meta", "metadata")
  return json.load(open(path))


def test_nan_planted_in_a_checkpoint_is_not_resumed(base, tmp_path):
  workdir = _copy(base, tmp_path)
  last = base[2]
  meta = _meta(workdir, last)
  ck = checkpointing.Checkpoints(os.path.join(workdir, "checkpoints"),
                                 meta["fingerprint"], keep=5)
  vector = np.full(tiny_padded_size(), 0.5)
  vector[3] = np.nan  # a correct checksum: only the invariant check sees it
  ck.save(last + 1, {"vector": vector, "iteration": np.int64(last + 1),
                     "residual": np.float64(0.0)})
  ck.close()
  assert _exact_or_refused(workdir, base) == "exact"
  assert results.read_summary(workdir)["resumed_from"] == last


def tiny_padded_size() -> int:
  from farkle_jax.game.layout import StateLayout
  from farkle_jax.solver import configuration
  rules, _ = configuration.check(_config())
  return StateLayout(rules).padded_size


def test_a_sweep_that_makes_nan_stops_before_saving(base, tmp_path,
                                                    monkeypatch):
  workdir = str(tmp_path / "w")
  run = methods.CompiledChunk.run

  def poisoned(self, state, residual, limit):
    out = run(self, state, residual, limit)
    vector = np.asarray(out.state[0]).copy()
    vector[5] = np.nan
    return out._replace(state=(vector, out.state[1]))

  monkeypatch.setattr(methods.CompiledChunk, "run", poisoned)
  with pytest.raises(driver.SolveFault, match=r"sweep 1: .*non-finite"):
    driver.run(_config(), workdir)
  assert not os.path.exists(os.path.join(workdir, "checkpoints", "1"))
  monkeypatch.undo()
  assert _exact_or_refused(workdir, base) == "exact"


def test_second_solve_on_a_workdir_is_refused_at_once(base, tmp_path):
  workdir = _copy(base, tmp_path)
  with locking.WorkdirLock(workdir):
    with pytest.raises(locking.WorkdirLocked, match=rf"pid {os.getpid()}"):
      driver.run(_config(), workdir)
  assert _exact_or_refused(workdir, base) == "exact"


def _no_space(*args, **kwargs):
  raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_full_disk_on_a_checkpoint_then_resume_is_exact(base, tmp_path,
                                                        monkeypatch):
  workdir = str(tmp_path / "w")
  save = checkpointing.Checkpoints.save

  def save_until_full(self, step, *a, **k):
    if step >= 3:
      _no_space()
    return save(self, step, *a, **k)

  monkeypatch.setattr(checkpointing.Checkpoints, "save", save_until_full)
  with pytest.raises(OSError, match="No space left"):
    driver.run(_config(), workdir)
  monkeypatch.undo()
  assert _exact_or_refused(workdir, base) == "exact"
  assert results.read_summary(workdir)["resumed_from"] == 2


def test_full_disk_on_the_results_then_rerun_is_exact(base, tmp_path,
                                                      monkeypatch):
  workdir = _copy(base, tmp_path)
  monkeypatch.setattr(results, "_replace_atomically", _no_space)
  with pytest.raises(OSError, match="No space left"):
    driver.run(_config(), workdir)
  with pytest.raises(results.ResultsError):
    results.load(workdir)  # nothing half-written is loaded
  monkeypatch.undo()
  assert _exact_or_refused(workdir, base) == "exact"


@pytest.mark.parametrize("fault", ["flip", "truncate", "delete"])
@pytest.mark.parametrize("name", ["start_values.npy", "summary.json"])
def test_damaged_results_are_never_loaded(base, tmp_path, name, fault):
  workdir = str(tmp_path / "w")
  shutil.copytree(base[0], workdir)
  path = os.path.join(workdir, name)
  {"flip": _flip, "truncate": _truncate, "delete": os.remove}[fault](path)
  with pytest.raises(results.ResultsError, match=r"rerun farkle_jax.main"):
    results.load(workdir)
  driver.ensure(_config(), workdir)  # a rerun rewrites them exactly
  np.testing.assert_array_equal(results.load(workdir).w0, base[1])


def test_start_values_out_of_range_are_refused(base, tmp_path):
  workdir = str(tmp_path / "w")
  shutil.copytree(base[0], workdir)
  summary = results.read_summary(workdir)
  w0 = base[1].copy()
  w0[0, 0, 0, 0] = 1.5
  run = results.Run(w0, *results.load(base[0])[1:3], summary)
  results.write(workdir, summary, run.w0, run.layout, run.roll, ())
  with pytest.raises(results.ResultsError, match=r"outside \[0, 1\]"):
    results.load(workdir)


def test_unconverged_run_exits_with_an_error_and_is_refused_by_readers(
    tmp_path):
  config = _config()
  config.solver.max_iterations = 2
  with pytest.raises(driver.NotConverged, match="max_iterations"):
    driver.run(config, str(tmp_path))
  with pytest.raises(results.ResultsError, match="did not converge"):
    results.load(str(tmp_path))
  run = results.load(str(tmp_path), allow_unconverged=True)
  assert not run.summary["converged"] and run.summary["iterations"] == 2


def _no_tmp(directory: str) -> bool:
  return not [n for _, dirs, files in os.walk(directory)
              for n in dirs + files if ".tmp" in n or "-tmp" in n]


_ENOSPC_FROM_TENSORSTORE = (
    "RESOURCE_EXHAUSTED: Error writing \"vector/0\" in OCDBT database: "
    "Failed to write 391540 bytes to file 5: No space left on device "
    "[os_error_code='28']")


@pytest.mark.parametrize("where", ["save", "wait_until_finished"])
def test_a_save_failing_inside_orbax_is_one_os_error_and_resumes(
    base, tmp_path, monkeypatch, where):
  """Orbax reports a full disk as a ValueError of TensorStore's, at the
  save or (asynchronously) at the next wait: either way one OSError with
  the OS's reason, its half-written directory removed, and a rerun exact."""
  import orbax.checkpoint as ocp
  workdir = str(tmp_path / "w")
  real = getattr(ocp.CheckpointManager, where)

  calls = []

  def failing(self, *args, **kwargs):
    steps = self.all_steps()
    if steps and max(steps) >= 2:
      if not calls:   # the half-written save, once
        os.makedirs(os.path.join(str(self.directory),
                                 "3.orbax-checkpoint-tmp-7"))
      calls.append(where)
      raise ValueError(_ENOSPC_FROM_TENSORSTORE)
    return real(self, *args, **kwargs)

  monkeypatch.setattr(ocp.CheckpointManager, where, failing)
  with pytest.raises(checkpointing.CheckpointWriteError) as failed:
    driver.run(_config(), workdir)
  monkeypatch.undo()
  assert failed.value.errno == errno.ENOSPC
  assert "could not save checkpoint" in str(failed.value)
  assert _no_tmp(workdir)
  assert _exact_or_refused(workdir, base) == "exact"


def _half_written_then_full(f, array, **kwargs):
  f.write(b"\x93NUMPY" + b"\0" * 1000)
  _no_space()


@pytest.mark.parametrize("module, name, fault", [
    (results.np, "save", _half_written_then_full),   # the results
    (locking.os, "write", _no_space)],               # the lock
    ids=["results", "lock"])
def test_a_full_disk_leaves_no_temporary_file_and_the_rerun_is_exact(
    base, tmp_path, monkeypatch, module, name, fault):
  workdir = _copy(base, tmp_path)
  monkeypatch.setattr(module, name, fault)
  with pytest.raises(OSError, match="No space left"):
    driver.run(_config(), workdir)
  monkeypatch.undo()
  assert _no_tmp(workdir)
  assert _exact_or_refused(workdir, base) == "exact"


@contextlib.contextmanager
def _small_tmpfs(mount, size: str):
  """A tmpfs of `size` at `mount` (root on Linux); skips the test where
  mounting is not allowed (the injected faults cover the same paths)."""
  mount.mkdir()
  done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}",
                         "tmpfs", str(mount)], capture_output=True)
  if done.returncode != 0:
    pytest.skip("no tmpfs here: " + done.stderr.decode()[:100])
  try:
    yield mount
  finally:
    subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_real_full_disk_where_the_machine_allows_a_small_tmpfs(base,
                                                                 tmp_path):
  """The same on a 200 kB tmpfs."""
  with _small_tmpfs(tmp_path / "full", "200k") as mount:
    workdir = str(mount / "run")
    with pytest.raises(OSError) as failed:
      driver.run(_config(), workdir)
    assert failed.value.errno == errno.ENOSPC
    assert _no_tmp(workdir)


# The disk fills while Orbax writes a checkpoint's metadata files (Python's
# open) and TensorStore still writes its arrays: the save fails with those
# writes in flight, as on a real full disk, but on every run (before they
# were quieted, each such run printed three tracebacks after its error line).
_FULL_FROM_CHECKPOINT_2 = r"""
import builtins, errno, os, re, runpy
real_open = builtins.open

def full(file, mode="r", *args, **kwargs):
  step = re.search(r"(\d+)\.orbax-checkpoint-tmp", str(file))
  if step and int(step.group(1)) >= 2 and set(mode) & set("wax+"):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
  return real_open(file, mode, *args, **kwargs)

builtins.open = full
runpy.run_module("farkle_jax.main", run_name="__main__", alter_sys=True)
"""


# The injected full disk three times in the thorough tier; a real one
# (tmpfs) here.
@pytest.mark.parametrize("disk, runs", [
    pytest.param("injected", 3, marks=pytest.mark.thorough), ("tmpfs", 1)])
def test_a_full_disk_is_one_error_line_and_no_traceback_every_time(
    tmp_path, disk, runs):
  """The command on a full disk, several times (the abandoned writes of a
  failed save end at random moments): exit code 1, the error line last,
  and no traceback of any library before or after it."""
  with contextlib.ExitStack() as stack:
    where, start = tmp_path, [sys.executable, "-c", _FULL_FROM_CHECKPOINT_2]
    if disk == "tmpfs":   # small enough to fill at checkpoint 2 or 3
      where = stack.enter_context(_small_tmpfs(tmp_path / "full", "160k"))
      start = [sys.executable, "-m", "farkle_jax.main"]
    for run in range(runs):
      workdir = where / f"run{run}"
      out = subprocess.run(
          [*start, "--config=configs/tiny.py:facebook",
           "--config.checkpoint.every=1", "--config.solver.sweeps_per_call=1",
           f"--workdir={workdir}", "--progress=log"],
          cwd=ROOT, capture_output=True, text=True, timeout=300)
      shutil.rmtree(workdir, ignore_errors=True)   # the next run's space
      output = out.stdout + out.stderr
      assert out.returncode == 1, output[-3000:]
      last = out.stderr.strip().splitlines()[-1]
      assert last.startswith("error: could not save checkpoint "), last
      assert "No space left on device" in last
      for word in ("Traceback", "Event loop is closed", "never retrieved",
                   "destroyed but it is pending"):
        assert word not in output, f"run {run}: {output[-3000:]}"


def _never_retrieved(filename: str) -> None:
  """Leaves a failed future, raised in code of `filename`, unawaited in a
  closed loop, as a failed save's sibling writes are left."""
  code = compile("def write():\n  raise OSError(28, 'No space left')\n",
                 filename, "exec")
  scope = {}
  exec(code, scope)
  loop = asyncio.new_event_loop()
  future = loop.create_future()
  try:
    scope["write"]()
  except OSError as e:
    future.set_exception(e)
  loop.close()
  del future
  gc.collect()   # asyncio reports it when the future is collected


def test_the_echoes_of_a_failed_save_are_debug_lines_not_tracebacks(caplog):
  """What asyncio says of Orbax's abandoned writes is logged at DEBUG;
  the same of anyone else's code is left as it was."""
  import tensorstore as ts
  checkpointing._orbax()   # installs the filter and the hook
  caplog.set_level(logging.INFO)
  _never_retrieved(os.path.join(os.sep, "site", "orbax", "checkpoint.py"))
  _never_retrieved(os.path.join(os.sep, "site", "someone", "else.py"))
  retrieved = [r.exc_info[1].__traceback__.tb_next.tb_frame.f_code
               for r in caplog.records if "never retrieved" in r.message]
  assert [c.co_filename for c in retrieved] == [
      os.path.join(os.sep, "site", "someone", "else.py")]

  caplog.set_level(logging.DEBUG)   # TensorStore ends a write too late:
  loop = asyncio.new_event_loop()
  promise, write = ts.Promise.new()

  async def save():
    async def failed():
      raise OSError(errno.ENOSPC, "No space left on device")
    await asyncio.gather(failed(), write)

  with pytest.raises(OSError):
    loop.run_until_complete(save())
  loop.close()
  promise.set_result(None)   # its callback finds the loop closed
  late = [r for r in caplog.records if "loop closed" in r.getMessage()]
  assert late and late[0].levelno == logging.DEBUG


def test_a_coroutine_of_orbax_never_awaited_is_a_debug_line(tmp_path):
  """Python's warning of a coroutine never awaited (a failed save's write,
  collected late) is a DEBUG line when the coroutine is Orbax's or
  TensorStore's, and printed as ever when it is anyone else's."""
  for name in ("orbax", "someone"):
    (tmp_path / name).mkdir()
    (tmp_path / name / "writes.py").write_text(
        f"async def {name}_write():\n  pass\n")
  script = ("import gc, importlib\n"
            "from farkle_jax.solver import checkpointing\n"
            "checkpointing._orbax()\n"   # installs the hooks
            "for name in ('orbax', 'someone'):\n"
            "  module = importlib.import_module(name + '.writes')\n"
            "  c = getattr(module, name + '_write')()\n"
            "  del c\n"
            "  gc.collect()\n")
  out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                           [str(tmp_path), ROOT])))
  assert out.returncode == 0, out.stderr
  warned = [l for l in out.stderr.splitlines() if "never awaited" in l]
  assert len(warned) == 1, out.stderr
  assert "coroutine 'someone_write' was never awaited" in warned[0]
