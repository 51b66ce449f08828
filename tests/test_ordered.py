"""The ordered (fast) method against the baseline, the reference, and itself
sharded over several devices."""

import functools
import os
import subprocess
import sys

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import configuration, methods, ordered

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = {
    "facebook": rules_lib.facebook(floor=-500, goal=1000),
    "minimal": rules_lib.minimal(goal=1000),
}


def settings(**changes) -> configuration.Settings:
  """Solver settings of an absolute tolerance, 200 sweeps in one call."""
  config = configuration.base("minimal")
  config.solver.norm = "absolute"
  config.solver.sweeps_per_call = 200
  return configuration.check(config)[1]._replace(**changes)


def _solve(method, rules, tol=1e-15, b_group=0):
  layout = StateLayout(rules, chunk_keys=512)
  chunk = methods.compile_chunk(
      methods.build(layout, roll_tables.build(rules),
                    settings(method=method, tol=tol, b_group=b_group)),
      settings(tol=tol))
  out = chunk.run(chunk.method.init(), float("inf"), 200)
  assert out.residual < tol
  return chunk.method.start_values(out.state), out.done


@functools.lru_cache(maxsize=None)
def baseline(name):
  """Value iteration of GAMES[name] (values read-only), solved once for the
  tests of every method that compare with it."""
  w0, sweeps = _solve("value_iteration", GAMES[name])
  w0 = np.array(w0)
  w0.setflags(write=False)
  return w0, sweeps


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_ordered_agrees_with_baseline_and_reference(name):
  fast, fast_sweeps = _solve("ordered", GAMES[name])
  base, base_sweeps = baseline(name)
  np.testing.assert_allclose(fast, base, rtol=0, atol=1e-12)
  ref, _ = reference.solve(name, 1000, -500)
  np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
  assert fast_sweeps * 3 < base_sweeps


@pytest.mark.parametrize("b_group", [1, 3, 40])
def test_sub_batch_size_does_not_change_values(b_group):
  rules = rules_lib.facebook(floor=-250, goal=750)
  a, _ = _solve("ordered", rules, b_group=b_group)
  b, _ = _solve("ordered", rules, b_group=16)
  np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_stages_cover_every_key_once():
  layout = StateLayout(GAMES["facebook"])
  stages, _ = ordered.build(layout, relative=False, b_group=4, devices=3)
  keys = np.asarray(stages.keys).ravel()
  real = keys[keys != layout.sink]
  assert len(real) == layout.num_keys == len(set(real))
  assert stages.keys.shape[1] % 3 == 0
  # Every bank target of a stage lies in an earlier stage.
  stage_of = np.full(layout.padded_size, -1)
  for s in range(stages.keys.shape[0]):
    stage_of[np.asarray(stages.keys[s]).ravel()] = s
  stage_of[-1] = -1
  B, D, F, E = layout.key_shape
  for b in (0, 7, 25):
    for d in (0, 13, 29):
      here = stage_of[layout.padded_index(b, d, 1, 2)]
      for t in range(layout.bank_min, 30 - b):
        there = stage_of[layout.padded_index(d, b + t, 2, 0)]
        assert there < here


SHARDED = """
import os, sys
sys.path.insert(0, {tests!r})
import jax
jax.config.update("jax_num_cpu_devices", 4)
import numpy as np, farkle_jax
from farkle_jax.game import roll_tables, rules as R
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import methods, placement
from test_ordered import settings
assert jax.device_count() == 4 and placement.make_mesh().size == 4
r = R.facebook(floor=-500, goal=1000)
s = settings(tol=1e-15, b_group=4)
chunk = methods.compile_chunk(
    methods.build(StateLayout(r, chunk_keys=512), roll_tables.build(r), s), s)
out = chunk.run(chunk.method.init(), float("inf"), 200)
np.save(sys.argv[1], chunk.method.start_values(out.state))
"""


def test_sharded_over_four_devices_equals_single_device(tmp_path):
  path = str(tmp_path / "w0.npy")
  env = {**os.environ, "JAX_PLATFORMS": "cpu"}
  out = subprocess.run([sys.executable, "-c", SHARDED.format(tests=os.path.join(ROOT, "tests")), path],
                       env=env, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stderr[-3000:]
  single, _ = _solve("ordered", GAMES["facebook"], b_group=4)
  np.testing.assert_array_equal(np.load(path), single)
