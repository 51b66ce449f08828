"""The Newton step of N players under a penalty: the exits of a turn
against its value, the correction against the linear system it solves
(assembled here in NumPy), and whole solves with and without it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, configuration, driver, multiplayer
from farkle_jax.solver import penalty_blocks, seat_newton, stage_engine
from farkle_jax.solver import vector_pass
from farkle_jax.solver.memory import MemoryRefused

_LUCKY = (0.3, 0.14, 0.14, 0.14, 0.14, 0.14)


@pytest.mark.parametrize("rules", [
    rules_lib.facebook(goal=600, floor=-300).replace(players=3),
    rules_lib.minimal(goal=600).replace(players=4, final_round=True,
                                        final_round_cap=300),
    rules_lib.minimal(goal=500).replace(players=3, dice=(_LUCKY,)),
    rules_lib.minimal(goal=300).replace(players=3,
                                        hands=((), (_LUCKY,), ()))],
    ids=["penalty", "final-round", "dice-differ", "hands"])
def test_a_turn_is_the_mix_of_its_exits(rules):
  """At random start vectors, the turn of every channel from its exits
  (`turn_exits`: the mover's channel passed alone, then the mix of banks
  at each t, the goal's wins and final rounds included, the farkle and
  the win past the batch's last row) is the backward pass of every
  channel (`turn_pass`), each mover from its own hand."""
  seats = SeatsLayout(rules)
  roll = bellman.roll_arrays(roll_tables.build(rules))
  rng = np.random.default_rng(seats.players)
  w = rng.uniform(size=(seats.num_keys + 1, seats.players))
  w0 = jnp.asarray(w / w.sum(1, keepdims=True))
  keys = rng.integers(0, seats.num_keys, 48)
  fields = seats.key_fields(keys)
  s0 = np.asarray(fields[0])
  base = seats.bank_base(fields)
  final = multiplayer._final(seats) if seats.past_goal else None
  batch = vector_pass.Batch(
      farkle=vector_pass.farkle_values(
          w0, jnp.asarray(seats.key_index(seats.farkle_fields(fields))),
          seats),
      bank_base=jnp.asarray(base, jnp.int32),
      s0=jnp.asarray(s0, jnp.int32),
      top=jnp.int32(seats.t_max(s0).max()),
      final=None if final is None else jnp.asarray(final),
      start=(jnp.asarray(seats.start_of_base(base) - 1, jnp.int32)
             if rules.hands else None))
  e = jax.jit(vector_pass.turn_exits, static_argnames="seats")(
      w0, batch, roll, seats)
  every = jax.jit(vector_pass.turn_pass, static_argnames="seats")(
      w0, batch, roll, seats)
  n = seats.players
  np.testing.assert_allclose(e.value, vector_pass.seat_vector(every, n),
                             rtol=0, atol=1e-14)
  np.testing.assert_allclose(e.farkle, every[n - 1], rtol=0, atol=1e-15)
  won = 1 - e.bank.sum(0) - e.farkle
  assert e.bank.min() >= 0 and won.min() >= -1e-15
  assert e.bank.sum(0).mean() > 0.2 and e.farkle.mean() > 0.02
  if rules.hands:   # the movers hold different hands
    assert len(set(np.asarray(batch.start).tolist())) > 1


def _one_sweep(goal: int, floor: int, **rules):
  """A three-player Facebook game after one sweep with exits recorded, its
  correction not yet applied."""
  config = configuration.base("facebook")
  config.rules.update(goal=goal, floor=floor, players=3, **rules)
  config.solver.update(tol=1e-14, norm="absolute", newton=True)
  rules, settings = configuration.check(config)
  engine = stage_engine.StageEngine(rules, settings)
  engine.build()
  w0, exits, per = engine.fresh().w0, engine.exits, engine.seats.stages_per_block
  for b in range(len(engine.tables.work) // per):
    w0, _, exits = penalty_blocks.compiled_block_step(
        w0, engine.tables, jnp.int32(b), True, engine.roll, engine.plan,
        exits)
  return engine, w0, exits


@pytest.mark.parametrize("rules", [{}, {"entry_minimum": 350}])
def test_the_correction_solves_its_linear_system(rules):
  """x = y + delta, as the correction returns it, satisfies the sweep's
  linearization, assembled here key by key in NumPy from the exits:
  x_k - y_k = R(sum_t bank_k[t] (x - y)[bank target] + a_k (x - y)[farkle
  target]) + a_k (R(y[target]) - read_k) where the read was stale. Also
  with an entry minimum, where players off the board have score indices
  of their own."""
  engine, y, exits = _one_sweep(300 if not rules else 400, -150, **rules)
  seats, tables = engine.seats, engine.tables
  x, passes, size = seat_newton.compiled_correct(
      jnp.array(y), exits, tables, engine.plan)
  x, y = np.asarray(x), np.asarray(y)
  assert 1 < int(passes) < seat_newton.INNER_PASSES and float(size) > 1e-3
  keys, real = np.asarray(tables.keys), np.asarray(tables.real)
  farkle, chain = np.asarray(tables.farkle), np.asarray(tables.chain)
  bank = np.asarray(exits.bank, np.float64)
  slope, read = np.asarray(exits.slope), np.asarray(exits.read)
  d = x - y
  worst = 0.0
  for s, m in zip(*np.nonzero(real)):
    fields = seats.key_fields(keys[s, m])
    ahead = slope[s, m] * d[farkle[s, m]]
    for t in np.nonzero(bank[s, :, m])[0]:
      after = seats.after_bank(fields, t)
      if after[seats.players - 1] < seats.num_scores:   # else a win
        ahead = ahead + bank[s, t, m] * d[seats.key_index(after)]
    want = np.roll(ahead, 1)
    if chain[s, m] < 0:   # a later block: the read was stale
      want += slope[s, m] * (np.roll(y[farkle[s, m]], 1) - read[s, :, m])
    worst = max(worst, np.abs(d[keys[s, m]] - want).max())
  assert worst < 1e-8 * np.abs(d).max()
  assert np.abs(x.sum(-1)[:-1] - 1).max() < 1e-12   # still distributions


def test_newton_and_plain_sweeps_reach_the_same_values(tmp_path):
  """Three players, Facebook rules to 300 (floor -150): the Newton step
  takes 5 sweeps to 2 (measured; to 1,000, 17 to 7), and the values agree
  to 1e-14."""
  runs = {}
  for newton in (True, False):
    config = configuration.base("facebook")
    config.rules.update(goal=300, floor=-150, players=3)
    config.solver.update(tol=1e-14, norm="absolute", newton=newton)
    summary = driver.run(config, str(tmp_path / str(newton)))
    runs[newton] = summary, np.load(tmp_path / str(newton)
                                    / "start_values.npy")
  (fast, w_fast), (plain, w_plain) = runs[True], runs[False]
  assert fast["converged"] and plain["converged"]
  assert fast["iterations"] <= plain["iterations"] - 3
  np.testing.assert_allclose(w_fast, w_plain, rtol=0, atol=1e-14)


def _config(newton, limit_gb):
  config = configuration.base("facebook")
  config.rules.update(goal=1200, floor=-600, players=3)
  config.solver.newton = newton
  config.memory_limit_gb = limit_gb
  return config


def test_the_newton_step_is_counted_and_dropped_where_it_does_not_fit():
  """Its exits count in the estimate; left to choose (None), the solve
  goes without them where they do not fit; asked for (True), a refusal
  names solver.newton=False, which fits."""
  seats, settings = stage_engine.check(_config(None, 64.0))
  with_it = stage_engine.footprint(seats, 256, 1, newton=True)[1]
  without = stage_engine.footprint(seats, 256, 1)[1]
  S, U, G = multiplayer.plan_sizes(seats, 256, 1)
  exits = seat_newton.footprint(seats, S, U * G)
  assert with_it - without >= exits > 0
  assert stage_engine.plan_memory(seats, settings, 256)[1]
  limit = (with_it + without) / 2 / 0.8 / 2**30
  seats, settings = stage_engine.check(_config(None, limit))
  need, newton = stage_engine.plan_memory(seats, settings, 256)
  assert not newton and need == stage_engine._need(seats, 256)
  seats, settings = stage_engine.check(_config(True, limit))
  with pytest.raises(MemoryRefused, match=r"solver\.newton=False"):
    stage_engine.plan_memory(seats, settings, 256)
