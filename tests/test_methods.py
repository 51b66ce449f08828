"""The methods' interface: the residual each reports is the norm it names;
every method split over several devices gives one device's values."""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import methods
from test_ordered import settings

RULES = rules_lib.facebook(floor=-150, goal=600)
# Four sweeps, short of convergence (tol 1e-15): the values split over
# devices must equal one device's after every sweep, not only at the end
# (the wavefront's collectives on forced CPU devices take 0.5 s a sweep).
SWEEPS = 4


def _all_values(method_name, state, layout):
  """Every value the method's residual covers, as one flat array."""
  if method_name in ("ordered", "wavefront"):
    return np.asarray(layout.unpad(state[0])).reshape(-1)
  return np.asarray(state[0]).reshape(-1)


@pytest.mark.parametrize("method_name",
                         ["ordered", "wavefront", "value_iteration"])
@pytest.mark.parametrize("norm", ["relative", "absolute"])
def test_residual_is_the_named_norm_of_one_sweep(method_name, norm):
  layout = StateLayout(RULES, chunk_keys=256)
  s = settings(method=method_name, norm=norm, sweeps_per_call=1)
  chunk = methods.compile_chunk(
      methods.build(layout, roll_tables.build(RULES), s), s)
  state = chunk.method.init()
  for _ in range(3):
    before = _all_values(method_name, state, layout).copy()
    out = chunk.run(state, float("inf"), 1)
    after = _all_values(method_name, out.state, layout)
    change = np.abs(after - before)
    if norm == "relative":
      change = change / np.maximum(after, np.finfo(after.dtype).tiny)
    assert out.done == 1
    assert out.residual == pytest.approx(change.max(), rel=1e-12, abs=0)
    state = out.state


def test_builders_cover_the_configurable_methods():
  from farkle_jax.solver import configuration
  assert set(methods.BUILDERS) | {"auto"} == set(configuration.METHODS)


def test_auto_is_the_wavefront_on_accelerators_and_ordered_on_cpus():
  assert methods.resolve("auto", "cpu") == "ordered"
  assert methods.resolve("auto", "gpu") == "wavefront"
  assert methods.resolve("auto", "tpu") == "wavefront"
  assert methods.resolve("value_iteration", "gpu") == "value_iteration"
  # The suite's own backend: a CPU unless JAX_PLATFORMS names another.
  assert methods.resolve("auto") == (
      "ordered" if jax.default_backend() == "cpu" else "wavefront")


ON_CPU_DEVICES = """
import sys
import jax
jax.config.update("jax_num_cpu_devices", int(sys.argv[2]))
import numpy as np, farkle_jax
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import methods
sys.path.insert(0, "tests")
from test_methods import RULES, SWEEPS, settings
out = {}
for name in ("value_iteration", "wavefront", "ordered"):
  s = settings(method=name, tol=1e-15)
  chunk = methods.compile_chunk(methods.build(
      StateLayout(RULES, chunk_keys=256), roll_tables.build(RULES), s), s)
  spread = jax.tree.leaves(chunk.compiled.input_shardings[0][0])[0]
  assert len(spread.device_set) == int(sys.argv[2]), (name, spread)
  done = chunk.run(chunk.method.init(), float("inf"), SWEEPS)
  assert done.done == SWEEPS
  out[name] = chunk.method.start_values(done.state)
np.savez(sys.argv[1], **out)
"""


def _on_cpu_devices(path: str, devices: int):
  """Each method's values after SWEEPS sweeps on `devices` CPU devices, in
  a process of its own. Its backend is the CPU whatever the suite's: with
  JAX_PLATFORMS=cuda it would have the one GPU, not forced CPU devices."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  run = subprocess.run([sys.executable, "-c", ON_CPU_DEVICES, path,
                        str(devices)], cwd=root,
                       env={**os.environ, "JAX_PLATFORMS": "cpu"},
                       capture_output=True, text=True, timeout=900)
  assert run.returncode == 0, run.stderr[-3000:]
  return np.load(path)


def _on_one_device(tmp_path):
  """Each method's values on one CPU device: here, or in a CPU process
  where the suite runs on an accelerator (whose rounding differs)."""
  if jax.default_backend() != "cpu":
    return _on_cpu_devices(str(tmp_path / "one.npz"), 1)
  out = {}
  for name in ("value_iteration", "wavefront", "ordered"):
    s = settings(method=name, tol=1e-15)
    chunk = methods.compile_chunk(methods.build(
        StateLayout(RULES, chunk_keys=256), roll_tables.build(RULES), s), s)
    done = chunk.run(chunk.method.init(), float("inf"), SWEEPS)
    assert done.done == SWEEPS
    out[name] = chunk.method.start_values(done.state)
  return out


def test_every_method_on_four_devices_equals_one_device(tmp_path):
  """Each method split over 4 forced CPU devices: the one-device values,
  bit for bit (value iteration splits its chunks, the wavefront its columns,
  the ordered method its sub-batches)."""
  sharded = _on_cpu_devices(str(tmp_path / "four.npz"), 4)
  one = _on_one_device(tmp_path)
  for name in ("value_iteration", "wavefront", "ordered"):
    np.testing.assert_array_equal(sharded[name], one[name])


BUILD_COMPILES = """
import logging, sys
import jax
import farkle_jax
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import methods
sys.path.insert(0, "tests")
from test_methods import RULES, settings
seen = []
class Seen(logging.Handler):
  def emit(self, record):
    if record.getMessage().startswith("Compiling "):
      seen.append(record.getMessage().split(" with ")[0])
logging.getLogger("jax").addHandler(Seen())
jax.config.update("jax_log_compiles", True)
for name in ("wavefront", "ordered"):
  s = settings(method=name)
  method = methods.build(StateLayout(RULES, chunk_keys=256),
                         roll_tables.build(RULES), s)
  jax.block_until_ready(method.init())
print(seen)
"""


def test_building_a_method_compiles_nothing():
  """The methods a solve takes by default (the wavefront on a GPU, the
  ordered method on a CPU) make their tables and first values on the
  host and move them (`placement.on_device`): a conversion on the device
  would compile a small program per shape, tens of milliseconds each on a
  GPU at every start (15 of them for the wavefront of `facebook`
  before). Value iteration, the baseline, still compiles a few."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  run = subprocess.run([sys.executable, "-c", BUILD_COMPILES], cwd=root,
                       capture_output=True, text=True, timeout=300)
  assert run.returncode == 0, run.stderr[-3000:]
  assert run.stdout.strip() == "[]", run.stdout
