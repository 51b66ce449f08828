"""The methods' interface: the residual each reports is the norm it names."""

import numpy as np
import pytest

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import methods
from test_ordered import settings

RULES = rules_lib.facebook(floor=-250, goal=750)


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
  assert methods.resolve("auto") == "ordered"  # the tests run on a CPU
