"""Memory policy: the estimate's formula and refusals that name a fix."""

import importlib
import tracemalloc

import jax
import numpy as np
import pytest

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.solver import configuration, memory, methods, newton
from farkle_jax.solver import wave_schedule


def test_full_state_estimate_is_the_value_array_plus_temporaries():
  for floor in (-2500, -10_000):
    layout = StateLayout(rules_lib.facebook(floor=floor))
    C, T1, n, Kc = layout.value_shape
    values = C * T1 * n * Kc * 8
    keys = layout.num_keys * 8 * 4 + C * Kc * 16
    temps = 3 * 256 * 8 * Kc * 8
    assert memory.full_state_bytes(layout) == 2 * values + keys + temps
    assert n == N_DICE and T1 == layout.num_rows + 1
    # float32 halves the values, not the int32 index tables.
    assert (memory.full_state_bytes(layout, "float32")
            == values + temps // 2 + layout.num_keys * 4 * 4 + C * Kc * 16)


@pytest.mark.parametrize("config_name", ["tiny", "default"])
@pytest.mark.parametrize("method", ["ordered", "value_iteration"])
def test_device_estimate_bounds_the_compiled_chunk(config_name, method):
  """The estimate made before building anything is at least XLA's memory
  analysis of the compiled chunk, and not wildly above it."""
  config = importlib.import_module(f"configs.{config_name}").get_config()
  config.solver.method = method
  rules, settings = configuration.check(config)
  layout = StateLayout(rules, settings.chunk_keys)
  compiled = methods.compile_chunk(methods.build(
      layout, roll_tables.build(rules), settings), settings).memory_bytes()
  estimate = memory.footprint(layout, method, "float64").device
  # XLA's GPU compiler fuses more of a turn step than the CPU's, into fewer
  # temporaries than the estimate allows (tiny, value iteration: 16.0 MB
  # compiled on an H200 against 17.5 MB on a CPU, estimated 75.1 MB).
  over = 4 if jax.default_backend() == "cpu" else 5
  assert compiled <= estimate <= over * compiled + memory.TEMP_BYTES


def test_check_refuses_with_hints():
  assert memory.check(10, "x", (10, "here")) == 10
  with pytest.raises(memory.MemoryRefused,
                     match=r"x needs about .* but here is .*: a, b"):
    memory.check(11, "x", (10, "here"), ["a", "b"])
  with pytest.raises(memory.MemoryRefused, match="use a larger device"):
    memory.check(9, "x", (10, "here"), share=0.8)


def test_solve_hints_are_each_checked_to_fit():
  layout = StateLayout(rules_lib.facebook(floor=-10_000))
  budget = memory.footprint(layout, "value_iteration", "float64").device // 3

  def fits(lay, method, dtype):
    return memory.footprint(lay, method, dtype).device <= budget

  hints = memory.solve_hints(layout, "value_iteration", "float64", fits)
  assert hints[0].startswith("solver.method='ordered'")
  floor = int(next(h for h in hints if h.startswith("rules.floor")).split("=")[1])
  assert fits(StateLayout(layout.rules.replace(floor=floor)),
              "value_iteration", "float64")
  assert not fits(StateLayout(layout.rules.replace(floor=floor - 500)),
                  "value_iteration", "float64")
  # float32 alone would not fit this budget, so it is not offered.
  assert not any("float32" in h for h in hints)


# shared: the devices of a CPU backend share the host's memory (a limit
# bounds their sum with the host's); an accelerator's have their own (it
# bounds each). Both, on any backend.
@pytest.mark.parametrize("shared", [True, False])
def test_refusal_names_a_setting_that_fits_and_the_settings_check_it(
    shared):
  layout = StateLayout(rules_lib.facebook(floor=-100_000))
  with pytest.raises(memory.MemoryRefused, match=r"rules.floor=-\d+") as e:
    memory.check_solve(layout, "ordered", "float64", 1.0, shared=shared)
  floor = int(str(e.value).split("rules.floor=")[1].split(",")[0])
  fits = StateLayout(layout.rules.replace(floor=floor))
  need = memory.check_solve(fits, "ordered", "float64", 1.0, shared=shared)
  fp = memory.footprint(fits, "ordered", "float64")
  assert (need <= 2**30 if shared
          else fp.host <= 2**30 and fp.device <= 2**30)


@pytest.mark.parametrize("shared", [True, False])
def test_a_wavefront_refused_at_every_size_is_offered_the_ordered_method(
    shared):
  """The wavefront's rings outgrow 1 GB at any floor of these rules (auto
  is the wavefront on an accelerator); the ordered method fits at some:
  the refusal names it with that floor, which then fits."""
  layout = StateLayout(rules_lib.facebook(floor=-100_000))
  with pytest.raises(memory.MemoryRefused):
    memory.check_solve(StateLayout(layout.rules.replace(floor=0)),
                       "wavefront", "float64", 1.0, shared=shared)
  with pytest.raises(
      memory.MemoryRefused,
      match=r"fit: solver.method='ordered' with rules.floor=-\d+$") as e:
    memory.check_solve(layout, "wavefront", "float64", 1.0, shared=shared)
  floor = int(str(e.value).split("rules.floor=")[1])
  memory.check_solve(StateLayout(layout.rules.replace(floor=floor)),
                     "ordered", "float64", 1.0, shared=shared)


@pytest.mark.parametrize("rules", [
    rules_lib.facebook(), rules_lib.facebook(floor=-150, goal=600),
    rules_lib.minimal(goal=400),
    rules_lib.minimal(goal=2000).replace(entry_minimum=350),
    rules_lib.facebook(goal=3000).replace(entry_minimum=500),
    rules_lib.facebook(floor=-1000).replace(bank_minimum=300)])
def test_live_keys_from_score_pairs_are_the_schedule_s(rules):
  """The estimates' count (by score pairs) against the schedule's own (by
  keys)."""
  layout = StateLayout(rules)
  finish, start = wave_schedule.finish_steps(layout)
  assert (wave_schedule.most_live_keys(layout)
          == wave_schedule.live_keys(start, finish).max())


def test_the_wavefront_estimate_of_a_huge_game_takes_no_per_key_arrays():
  """Billions of keys (tens of GB of per-key arrays in the schedule), a
  few MB to estimate; a refusal of such a game stays small."""
  layout = StateLayout(rules_lib.facebook(goal=1_000_000))
  assert layout.num_keys > 3 * 10**9
  tracemalloc.start()
  try:
    memory.footprint(layout, "wavefront-newton", "float64")
    peak = tracemalloc.get_traced_memory()[1]
  finally:
    tracemalloc.stop()
  assert peak < 2**26


def test_available_bytes_of_host_and_device():
  host, where = memory.available_bytes(on_device=False)
  assert host > 0 and where == "available host memory"
  device = jax.devices()[0]
  if device.platform == "cpu":
    # On a CPU backend device arrays live in host memory too.
    assert memory.available_bytes(on_device=True)[1] == where
  else:   # an accelerator's own memory, as its runtime limits it
    have, there = memory.available_bytes(on_device=True)
    assert have > 0 and there == f"{device.device_kind} memory"
  assert np.isfinite(host)


def test_floor_hints_stay_on_the_score_step():
  rules = rules_lib.Rules(step=200, goal=10_000, bank_minimum=400,
                          single_scores=(200, 0, 0, 0, 0, 0),
                          triple_scores=(1000, 200, 400, 400, 600, 600),
                          fixed_n_of_a_kind=(1000, 2000, 3000),
                          three_pairs=800, straight=1600, penalty=600,
                          floor=-20_000)
  with pytest.raises(memory.MemoryRefused) as e:
    memory.check_solve(StateLayout(rules), "ordered", "float64", 0.05)
  for hint in str(e.value).split(": ")[-1].split(", "):
    if hint.startswith("rules.floor="):
      assert int(hint.split("=")[1]) % 200 == 0


def test_newton_step_memory_is_counted_and_its_absence_hinted():
  layout = StateLayout(rules_lib.facebook())
  with_step = memory.footprint(layout, "ordered-newton", "float64")
  without = memory.footprint(layout, "ordered", "float64")
  assert (with_step.device - without.device
          >= newton.buffer_bytes(layout))  # the exit buffer at least
  limit = (without.host + without.device + 2**26) / 2**30
  with pytest.raises(memory.MemoryRefused, match="solver.newton=False"):
    memory.check_solve(layout, "ordered-newton", "float64", limit)
  memory.check_solve(layout, "ordered", "float64", limit)


def test_split_methods_need_less_on_each_of_more_devices():
  layout = StateLayout(rules_lib.facebook())
  for method in ("value_iteration", "wavefront"):
    one, four = (memory.footprint(layout, method, "float64", n).device
                 for n in (1, 4))
    assert four < one / 2, method
  # The ordered method keeps its whole state on every device.
  assert (memory.footprint(layout, "ordered", "float64", 4).device
          == memory.footprint(layout, "ordered", "float64", 1).device)


def test_refusal_on_an_accelerator_names_the_devices_that_would_fit():
  layout = StateLayout(rules_lib.facebook(floor=-10_000))
  per_device = 16 * 2**30
  need = memory.footprint(layout, "value_iteration", "float64").device
  assert need > 2 * per_device  # tens of GB on one device
  n = memory.devices_that_fit(layout, "value_iteration", "float64",
                              per_device)
  assert n >= need // per_device  # the values split, the rest does not
  assert (memory.footprint(layout, "value_iteration", "float64", n).device
          <= per_device
          < memory.footprint(layout, "value_iteration", "float64",
                             n - 1).device)
  with pytest.raises(memory.MemoryRefused) as e:
    memory.check_solve(layout, "value_iteration", "float64", 16.0,
                       devices=1, shared=False)
  assert f"{n} devices of 16.0 GB (this run has 1)" in str(e.value)
  memory.check_solve(layout, "value_iteration", "float64", 16.0, devices=n,
                     shared=False)
  # Devices that share the host's memory do not add any.
  with pytest.raises(memory.MemoryRefused) as e:
    memory.check_solve(layout, "value_iteration", "float64", 16.0,
                       devices=n, shared=True)
  assert "devices of" not in str(e.value)
