"""A run of the N-player sweep's steps in one compiled loop: the same
values, changes and counts as the steps dispatched one at a time."""

import jax.numpy as jnp
import numpy as np
import pytest

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, multiplayer, penalty_blocks
from farkle_jax.solver import seat_newton, seat_sweep


def _setup(rules, newton=False):
  seats = SeatsLayout(rules)
  tables, plan = multiplayer.build(seats, 64, newton=newton)
  roll = bellman.roll_arrays(roll_tables.build(rules))
  return seats, tables, plan, roll


def _one_at_a_time(w0, tables, plan, roll, count, first, exits):
  """Every step dispatched on its own, as (w0, largest change, passes,
  work, exits)."""
  change, passes, work = 0.0, 0, 0.0
  share, per = np.asarray(tables.work), plan.seats.stages_per_block
  for i in range(count):
    if plan.cycles:
      w0, ch, taken, *_ = multiplayer.compiled_stage_step(
          w0, tables, jnp.int32(i), first, roll, plan)
      passes, work = passes + int(taken), work + int(taken) * share[i]
    else:
      w0, ch, *more = penalty_blocks.compiled_block_step(
          w0, tables, jnp.int32(i), first, roll, plan, exits)
      exits = more[0] if more else None
      passes, work = passes + per, work + share[i * per:(i + 1) * per].sum()
    change = max(change, float(ch))
  return w0, change, passes, work, exits


@pytest.mark.parametrize("rules, newton", [
    (rules_lib.minimal(goal=300).replace(players=3), False),
    (rules_lib.facebook(goal=300, floor=-150).replace(players=3), True)])
def test_a_sweep_in_one_loop_is_the_steps_one_at_a_time(rules, newton):
  """Two sweeps (the first from the guesses), without a penalty (stages,
  rotation cycles) and under one (blocks, with the Newton step's exits)."""
  seats, tables, plan, roll = _setup(rules, newton)
  per = 1 if plan.cycles else seats.stages_per_block
  count = len(np.asarray(tables.work)) // per
  start = multiplayer.initial_values(seats)
  # Two of each: the steps give their arguments' buffers to their results.
  exits = lambda: seat_newton.empty(tables, plan) if newton else None
  w_steps, w_loop, e_steps, e_loop = start, jnp.array(start), exits(), exits()
  for first in (True, False):
    w_steps, change, passes, work, e_steps = _one_at_a_time(
        w_steps, tables, plan, roll, count, first, e_steps)
    run = seat_sweep.compiled_steps(w_loop, tables, jnp.int32(0),
                                    jnp.int32(count), first, roll, plan,
                                    e_loop)
    w_loop, e_loop = run.w0, run.exits
    # Keys only: the sink row takes whichever padded entry's write lands
    # last, which a GPU does not fix (seen on an H200); no key reads it.
    np.testing.assert_allclose(w_loop[:-1], w_steps[:-1], rtol=0,
                               atol=1e-15)
    assert float(run.change) == pytest.approx(change, abs=1e-15)
    assert int(run.passes) == passes
    assert float(run.work) == pytest.approx(work, rel=1e-12)
  if newton:   # the real keys' exits (padding reads the sink)
    real = np.asarray(tables.real)                               # [S, M]
    for a, b in zip(e_loop, e_steps):
      keep = real if a.ndim == 2 else real[:, None, :]
      np.testing.assert_allclose(np.where(keep, a, 0), np.where(keep, b, 0),
                                 rtol=0, atol=1e-7)


def test_a_range_of_steps_leaves_the_others_alone():
  """Blocks 2 .. 4 of a sweep: the keys of the other blocks keep their
  values, the work counted is those blocks' share of the states."""
  seats, tables, plan, roll = _setup(
      rules_lib.facebook(goal=300, floor=-150).replace(players=3))
  per = seats.stages_per_block
  w0 = multiplayer.initial_values(seats)
  run = seat_sweep.compiled_steps(jnp.array(w0), tables, jnp.int32(2),
                                  jnp.int32(5), True, roll, plan)
  keys = np.asarray(tables.keys)
  inside = np.unique(keys[2 * per:5 * per])
  outside = np.setdiff1d(np.arange(seats.num_keys), inside)
  np.testing.assert_array_equal(np.asarray(run.w0)[outside],
                                np.asarray(w0)[outside])
  assert not np.allclose(np.asarray(run.w0)[inside[:-1]], 1 / 3)
  work = np.asarray(tables.work)[2 * per:5 * per].sum()
  assert float(run.work) == pytest.approx(work, rel=1e-12)
  assert int(run.passes) == 3 * per


def test_a_quick_sweep_is_one_call(tmp_path, monkeypatch):
  """The engine runs the first block alone (to measure its rate), then
  each sweep that fits `stage_engine.CALL_SECONDS` in one call."""
  from farkle_jax.solver import configuration, driver, stage_engine
  step, calls = seat_sweep.compiled_steps, []

  def counted(*args, **kwargs):
    calls.append(1)
    return step(*args, **kwargs)

  monkeypatch.setattr(seat_sweep, "compiled_steps", counted)
  # Every sweep quick, whatever the machine (a GPU's first block, which
  # sets the rate, carries its compilation).
  monkeypatch.setattr(stage_engine, "CALL_SECONDS", 1e9)
  config = configuration.base("facebook")
  config.rules.update(goal=300, floor=-150, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  summary = driver.run(config, str(tmp_path))
  assert summary["converged"] and len(calls) == summary["iterations"] + 1


def test_the_sweep_compiles_once_for_every_run_of_steps(tmp_path):
  """The first exits are placed as a run of steps leaves them
  (`seat_newton.shardings`), so the sweep's program compiled for the first
  run serves the later ones: one compilation for a whole solve (two
  before: the zeros sat elsewhere than the outputs). A game of its own
  shapes, which no other test compiles."""
  from farkle_jax.solver import configuration, driver
  config = configuration.base("facebook")
  config.rules.update(goal=350, floor=-150, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  before = seat_sweep.compiled_steps._cache_size()
  summary = driver.run(config, str(tmp_path))
  # The first sweep's runs and the second's, on one program.
  assert summary["converged"] and summary["iterations"] >= 2
  assert seat_sweep.compiled_steps._cache_size() - before == 1
