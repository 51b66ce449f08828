"""The wavefront method: its schedule keeps every dependency of the ordered
method, and its values agree with the baseline and the plain reference."""

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman, wavefront
from test_ordered import GAMES, _solve, baseline


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_wavefront_agrees_with_baseline_and_reference(name):
  wave, _ = _solve("wavefront", GAMES[name])
  base, _ = baseline(name)
  np.testing.assert_allclose(wave, base, rtol=0, atol=1e-12)
  ref, _ = reference.solve(name, 1000, -500)
  np.testing.assert_allclose(wave, ref, rtol=0, atol=1e-12)


def _built(rules):
  layout = StateLayout(rules)
  roll = bellman.roll_arrays(roll_tables.build(rules))
  tables, plan = wavefront.build(layout, roll, relative=True)
  return layout, plan, {k: np.asarray(v) for k, v in tables._asdict().items()}


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_every_bank_reads_a_start_value_finished_earlier(name):
  layout, plan, tab = _built(GAMES[name])
  K = layout.num_keys
  finish, t_max = tab["finish"][:K], tab["t_max"][:K]
  b, d, f, e = layout.key_fields()
  for t in range(layout.bank_min, layout.num_rows):
    live = t <= t_max
    target = (d, b + t, e, np.zeros_like(e))
    inside = live & (b + t < layout.num_scores)
    k2 = layout.key_index(*(x[inside] for x in target))
    # Row t of a key runs at step finish - t, after its target finished.
    assert np.all(finish[k2] < finish[inside] - t)
  assert plan.steps == finish.max() + 1


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_slots_run_every_key_once_without_overlap(name):
  layout, _, tab = _built(GAMES[name])
  K = layout.num_keys
  slot_keys = tab["slot_keys"]
  real = slot_keys[slot_keys < K]
  assert len(real) == K == len(set(real.tolist()))
  start = tab["finish"][:K] - tab["t_max"][:K]
  for row in slot_keys:
    keys = row[row < K]
    assert np.all(start[keys][1:] > tab["finish"][keys][:-1])
  assert len(slot_keys) == wavefront.slot_count(layout)


def test_finishing_groups_are_the_score_sums():
  layout, _, tab = _built(GAMES["facebook"])
  b, d, _, _ = layout.key_fields()
  for keys in tab["group_keys"]:
    keys = keys[keys < layout.num_keys]
    assert len(set((b + d)[keys].tolist())) <= 1


def test_far_fewer_dependent_steps_than_the_ordered_method():
  from farkle_jax.solver import ordered
  layout = StateLayout(rules_lib.facebook(goal=3000, floor=-1000))
  roll = bellman.roll_arrays(roll_tables.build(layout.rules))
  _, plan = wavefront.build(layout, roll, relative=True)
  stages, _ = ordered.build(layout, relative=True, b_group=16)
  top = np.asarray(stages.top)
  ordered_steps = np.maximum(np.maximum(top + 1, 1).sum(axis=1), 1).sum()
  assert plan.steps * 20 < ordered_steps
