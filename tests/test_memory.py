"""Memory policy: the estimate's formula and refusals that name a fix."""

import numpy as np
import pytest

from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.solver import memory


def test_full_state_estimate_is_the_value_array_plus_temporaries():
  for floor in (-2500, -10_000):
    layout = StateLayout(rules_lib.facebook(floor=floor))
    C, T1, n, Kc = layout.value_shape
    values = C * T1 * n * Kc * 8
    keys = layout.num_keys * 8 * 4 + C * Kc * 16
    temps = 3 * 256 * 8 * Kc * 8
    assert memory.full_state_bytes(layout) == values + keys + temps
    assert n == N_DICE and T1 == layout.num_rows + 1
    # float32 halves the values, not the int32 index tables.
    assert (memory.full_state_bytes(layout, "float32")
            == (values + temps) // 2 + layout.num_keys * 4 * 4 + C * Kc * 16)


def test_check_refuses_with_hints():
  assert memory.check(10, "x", (10, "here")) == 10
  with pytest.raises(memory.MemoryRefused,
                     match=r"x needs about .* but here is .*: a, b"):
    memory.check(11, "x", (10, "here"), ["a", "b"])
  with pytest.raises(memory.MemoryRefused, match="use a larger device"):
    memory.check(9, "x", (10, "here"), share=0.8)


def test_solve_hints_name_a_floor_that_fits():
  rules = rules_lib.facebook(floor=-10_000)
  layout = StateLayout(rules)
  need = memory.full_state_bytes(layout)
  hints = memory.solve_hints(layout, "value_iteration", "float64", need,
                             need // 3)
  assert hints[0].startswith("solver.method='ordered'")
  floor = int(hints[1].split("=")[1])
  fits = StateLayout(rules.replace(floor=floor))
  assert memory.full_state_bytes(fits) <= need // 3
  assert hints[-1].startswith("solver.dtype='float32'")


def test_available_bytes_of_host_and_device():
  host, where = memory.available_bytes(on_device=False)
  assert host > 0 and where == "available host memory"
  # On a CPU backend device arrays live in host memory too.
  assert memory.available_bytes(on_device=True)[1] == where
  assert np.isfinite(host)
