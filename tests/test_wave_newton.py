"""The wavefront's Newton step: its stale reads are the wavefront's, and it
reaches the plain reference with fewer evaluations (docs/model.md §4.3)."""

import jax.numpy as jnp
import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman, memory, methods, newton, wave_newton
from farkle_jax.solver.wave_schedule import finish_steps
from test_ordered import settings

RULES = rules_lib.facebook(floor=-500, goal=1000)


def _solve(newton: bool, tol: float = 1e-15, norm: str = "absolute"):
  layout = StateLayout(RULES, chunk_keys=512)
  s = settings(method="wavefront", tol=tol, newton=newton, norm=norm)
  chunk = methods.compile_chunk(
      methods.build(layout, roll_tables.build(RULES), s), s)
  out = chunk.run(chunk.method.init(), float("inf"), 200)
  assert out.residual < tol
  return chunk.method.start_values(out.state), out


def test_newton_wavefront_reaches_the_reference_with_fewer_evaluations():
  fast, with_step = _solve(True, norm="relative")
  plain, without = _solve(False, norm="relative")
  ref, _ = reference.solve("facebook", 1000, -500)
  np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
  np.testing.assert_allclose(plain, ref, rtol=0, atol=1e-12)
  # Work counts evaluations of every state: a sweep 1, an exit refresh 2.
  assert with_step.done < without.done
  assert with_step.work < without.work
  assert with_step.work > with_step.done   # at least one refresh ran


def test_stale_reads_are_those_finishing_after_the_key():
  layout = StateLayout(RULES)
  roll = bellman.roll_arrays(roll_tables.build(RULES))
  tables, _ = wave_newton.build(layout, roll, False, 8)
  pieces = tables.stages.newton.pieces
  keys, farkle = np.asarray(pieces.keys), np.asarray(pieces.farkle)
  real = keys < layout.sink
  finish = np.full(layout.padded_size, -1)
  finish[layout.padded_index(*layout.key_fields())] = finish_steps(layout)[0]
  stale = np.asarray(pieces.stale)
  np.testing.assert_array_equal(stale, real & (finish[farkle]
                                               > finish[keys]))
  # At the floor a penalty cannot lower the score: the target is of the
  # same sum, solved in the key's finishing group, so it is read fresh
  # (the ordered method's stages read it stale).
  b, d, f, e = (np.asarray(x) for x in layout.key_fields())
  at_floor = layout.padded_index(b, d, f, e)[(b == 0) & (f == 2)]
  floor_pieces = np.isin(keys, at_floor)
  assert floor_pieces.any() and not stale[floor_pieces].any()
  assert stale.any()


def test_no_step_without_a_penalty():
  assert not wave_newton.applies(StateLayout(rules_lib.minimal(goal=1000)))
  assert wave_newton.applies(StateLayout(RULES))


def test_footprint_counts_the_exits():
  layout = StateLayout(RULES)
  plain = memory.footprint(layout, "wavefront", "float64").device
  step = memory.footprint(layout, "wavefront-newton", "float64").device
  assert step >= plain + newton.buffer_bytes(layout)


def test_resumed_run_rebuilds_its_exits():
  """Absolute norm (`settings`): the first refresh comes at once."""
  layout = StateLayout(RULES, chunk_keys=512)
  s = settings(method="wavefront", tol=1e-15, newton=True)
  chunk = methods.compile_chunk(
      methods.build(layout, roll_tables.build(RULES), s), s)
  part = chunk.run(chunk.method.init(), float("inf"), 4)
  saved = chunk.method.to_checkpoint(part.state)
  state = chunk.method.from_checkpoint(
      {"vector": jnp.asarray(saved["vector"])}, None)
  assert not bool(state[2].ready)
  out = chunk.run(state, float("inf"), 200)
  ref, _ = reference.solve("facebook", 1000, -500)
  np.testing.assert_allclose(chunk.method.start_values(out.state), ref,
                             rtol=0, atol=1e-12)


def test_corrections_stop_when_fresh_exits_do_not_help():
  """Near ties the policy flips under any exits; once a sweep right after
  a refresh shrinks the change less than 10x, the run's sweeps go plain,
  and none is corrected near the tolerance."""
  layout = StateLayout(RULES)
  roll = bellman.roll_arrays(roll_tables.build(RULES))
  tables, plan = wave_newton.build(layout, roll, False, 8, tol=1e-9)
  old = jnp.full((layout.padded_size,), 0.5).at[-1].set(0)
  new = old.at[:-1].add(1e-3)
  kept = wave_newton.initial(old, plan)._replace(
      ready=jnp.asarray(True), steady=jnp.asarray(True),
      farkle=jnp.full_like(old, 0.5))
  no = jnp.asarray(False)
  for renewed, change, off in ((True, 0.5, True), (False, 0.5, False)):
    exits = kept._replace(renewed=jnp.asarray(renewed),
                          last=jnp.asarray(1.0))
    out, _, after, work, _ = wave_newton.step(
        new, old, jnp.asarray(change), no, exits, tables, plan)
    assert bool(after.off) == off
    assert bool((out == new).all()) == off   # off: uncorrected
    assert float(work) == (0 if off else 2)  # on: exits refreshed
  # Near the tolerance (within 100x): neither a refresh nor a correction.
  exits = kept._replace(last=jnp.asarray(1e-8))
  out, _, after, work, _ = wave_newton.step(
      new, old, jnp.asarray(5e-8), no, exits, tables, plan)
  assert not bool(after.off) and float(work) == 0
  assert bool((out == new).all())
