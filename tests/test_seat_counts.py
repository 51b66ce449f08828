"""The seat engine's sweep counted from the sizes alone
(`solver.seat_counts`) against the tables a solve builds, the memory per
device, and the plan script."""

from typing import NamedTuple

import numpy as np
import pytest

from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import multiplayer, seat_counts, stage_engine
from farkle_jax.solver.memory import MemoryRefused
from farkle_jax.solver import configuration


class _Devices(NamedTuple):
  """What `multiplayer.build` reads of a mesh: its size."""
  size: int


@pytest.mark.parametrize("rules, group, devices", [
    (rules_lib.facebook(goal=600, floor=-300).replace(players=3), 64, 1),
    (rules_lib.facebook(goal=1000, floor=-500).replace(players=3), 256, 2),
    (rules_lib.minimal(goal=1000).replace(players=4), 128, 1),
    (rules_lib.minimal(goal=800).replace(players=3, entry_minimum=600), 32,
     2),
    (rules_lib.minimal(goal=500).replace(players=3, final_round=True,
                                         final_round_cap=300), 16, 4)])
def test_sub_batch_rows_from_the_sizes_match_the_built_tables(
    rules, group, devices):
  seats = SeatsLayout(rules)
  mesh = None if devices == 1 else _Devices(devices)
  tables, plan = multiplayer.build(seats, group, mesh=mesh)
  tops = seat_counts.sub_batch_tops(seats, group, devices)
  np.testing.assert_array_equal(tops, np.asarray(tables.top))
  sweep = seat_counts.sweep(seats, group, devices)
  assert (sweep.stages, sweep.batches, sweep.group) == tops.shape + (
      plan.group,)
  # Every model state is a row of some sub-batch: padding only adds.
  live = int(np.asarray(tables.real).sum())
  assert live == seats.num_keys
  assert sweep.counts.column_steps >= sweep.counts.live_rows
  per = (tops + 1).reshape(tops.shape[0], devices, -1)
  assert sweep.counts.dependent_steps >= (per.sum(2).max(1)).sum()
  # The sorted sub-batches are dealt round the devices: their row steps
  # differ by at most one sub-batch's.
  load = per.sum(2)
  assert (load.max(1) - load.min(1) <= (tops + 1).max(1)).all()


def test_more_devices_hold_less_each_and_the_refusal_names_a_count(
    monkeypatch):
  """The values are whole on every device and the tables split: the
  memory per device falls with the devices down to the values. A device
  too small is refused, naming the devices that would hold the solve."""
  seats = SeatsLayout(rules_lib.facebook(goal=3000, floor=-1000).replace(
      players=3))
  one, eight = (stage_engine.footprint(seats, 2048, d)[1] for d in (1, 8))
  assert eight < one
  per_device = (one + eight) / 2
  need = stage_engine._devices_that_fit(seats, 2048, per_device)
  assert 1 < need <= 8
  assert stage_engine.footprint(seats, 2048, need)[1] <= per_device
  assert stage_engine.footprint(seats, 2048, need - 1)[1] > per_device
  config = configuration.base("facebook")
  config.rules.update(players=3, goal=3000, floor=-1000)
  config.memory_limit_gb = per_device / 0.8 / 2**30
  seats, settings = stage_engine.check(config)
  monkeypatch.setattr(stage_engine.jax, "default_backend", lambda: "gpu")
  with pytest.raises(MemoryRefused, match=rf"{need} devices \(--num_proc"):
    stage_engine.plan_memory(seats, settings, 2048)
