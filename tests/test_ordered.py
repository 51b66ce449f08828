"""The ordered (fast) method against the baseline, the reference, and itself
sharded over several devices."""

import functools
import os
import subprocess
import sys

import jax
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


# Once converged, a sweep's largest change is rounding, a few units in the
# last place of values near 1: under 1e-15 on a CPU, 1.3e-15 each sweep on
# an H200 (its multiply-adds round otherwise), where value iteration never
# gets below 1e-15. The values are compared at 1e-12.
TOL = 1e-15 if jax.default_backend() == "cpu" else 1e-14


def _solve(method, rules, tol=TOL, b_group=0):
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


SUB_BATCH_GAME = rules_lib.facebook(floor=-250, goal=750)


@functools.lru_cache(maxsize=None)
def _sub_batch_solve(b_group: int) -> np.ndarray:
  """The ordered solve of SUB_BATCH_GAME in sub-batches of `b_group`,
  solved once for all the sub-batch sizes compared with it."""
  w0 = np.array(_solve("ordered", SUB_BATCH_GAME, b_group=b_group)[0])
  w0.setflags(write=False)
  return w0


@pytest.mark.parametrize("b_group", [1, 3, 40])
def test_sub_batch_size_does_not_change_values(b_group):
  a, _ = _solve("ordered", SUB_BATCH_GAME, b_group=b_group)
  np.testing.assert_allclose(a, _sub_batch_solve(16), rtol=0, atol=1e-13)


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


def _stage_of(layout, stages):
  stage_of = np.full(layout.padded_size, -1)
  for s in range(stages.keys.shape[0]):
    stage_of[np.asarray(stages.keys[s]).ravel()] = s
  stage_of[-1] = -1
  return stage_of


@pytest.mark.parametrize("rules", [
    rules_lib.facebook(floor=-500, goal=1000),
    rules_lib.facebook(floor=-500, goal=1000).replace(entry_minimum=500)],
    ids=["facebook", "entry_minimum"])
def test_first_sweep_guesses_read_solved_keys_for_stale_reads_only(rules):
  layout = StateLayout(rules)
  stages, _ = ordered.build(layout, relative=False, b_group=4)
  stage_of = _stage_of(layout, stages)
  keys = np.asarray(stages.keys)
  guess, farkle = np.asarray(stages.guess), np.asarray(stages.farkle)
  real = keys != layout.sink
  here = np.broadcast_to(np.arange(keys.shape[0])[:, None, None], keys.shape)
  stale = real & (stage_of[farkle] > here)
  guessed = guess != layout.sink
  assert stale.sum() > 0
  # A guess where the read is stale, and mostly there (a target next to the
  # goal's last score may have no solved key to move up to).
  assert not (guessed & ~stale).any()
  assert guessed.sum() >= 0.9 * stale.sum()
  # Each guess is a real key solved by an earlier stage of the sweep.
  assert (stage_of[guess[guessed]] >= 0).all()
  assert (stage_of[guess[guessed]] < here[guessed]).all()
  # With the same farkle counts as the target it stands for.
  F = layout.num_farkle
  np.testing.assert_array_equal(guess[guessed] % (F * F),
                                farkle[guessed] % (F * F))


def test_first_sweep_guesses_start_closer_and_keep_the_fixed_point():
  """The guesses change the start of the iteration, not its end: the first
  sweep lands closer to the fixed point, and the iteration ends at the
  same values to 1e-12 in no more sweeps than from the initial values."""
  rules = rules_lib.facebook(floor=-500, goal=1500)
  layout = StateLayout(rules, chunk_keys=512)
  built = methods.build(layout, roll_tables.build(rules),
                        settings(method="ordered", tol=1e-13))
  ignored = built._replace(tables=(built.tables[0]._replace(
      guess=np.full_like(built.tables[0].guess, layout.sink)),
      built.tables[1]))
  first, last, sweeps = {}, {}, {}
  for name, method in (("guessed", built), ("ignored", ignored)):
    chunk = methods.compile_chunk(method, settings(tol=1e-13))
    one = chunk.run(chunk.method.init(), float("inf"), 1)
    first[name] = chunk.method.start_values(one.state)
    run = chunk.run(one.state, one.residual, 200)
    last[name], sweeps[name] = (chunk.method.start_values(run.state),
                                1 + run.done)
  np.testing.assert_allclose(last["guessed"], last["ignored"], rtol=0,
                             atol=1e-12)
  error = {k: np.abs(first[k] - last["ignored"]).max() for k in first}
  assert error["guessed"] < 0.5 * error["ignored"]
  assert sweeps["guessed"] <= sweeps["ignored"]


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
s = settings(tol=float(sys.argv[2]), b_group=4)   # the parent's stop
chunk = methods.compile_chunk(
    methods.build(StateLayout(r, chunk_keys=512), roll_tables.build(r), s), s)
out = chunk.run(chunk.method.init(), float("inf"), 200)
np.save(sys.argv[1], chunk.method.start_values(out.state))
"""


def test_sharded_over_four_devices_equals_single_device(tmp_path):
  path = str(tmp_path / "w0.npy")
  env = {**os.environ, "JAX_PLATFORMS": "cpu"}
  out = subprocess.run([sys.executable, "-c", SHARDED.format(
      tests=os.path.join(ROOT, "tests")), path, repr(TOL)],
                       env=env, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stderr[-3000:]
  single, _ = _solve("ordered", GAMES["facebook"], b_group=4)
  np.testing.assert_array_equal(np.load(path), single)
