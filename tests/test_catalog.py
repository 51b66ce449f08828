"""Named strategies: what is refused."""

import pytest

from farkle_jax.strategy import catalog


@pytest.mark.parametrize("name", [
    "bank:0", "bank:x", "bank:33", "goforit:1,2", "foo",
    "goforit:1,2,3,4,5,6", "goforit:-50,0,0,0,0,0/0,0,0,0,0,0",
    "goforit:25,0,0,0,0,0/0,0,0,0,0,0", "bank:1050", "bank:1" + "0" * 30,
    "goforit:0,0,0,0,0,0/0,0,0,0,0,1050", "bank:" + "5" * 5000])
def test_bad_strategy_names(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  with pytest.raises(catalog.StrategyError) as err:
    catalog.strategy(name, catalog.Context(layout, roll, w0))
  assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_optimal_needs_a_solved_run(tiny_runs):
  _, layout, roll, _ = tiny_runs("minimal")
  with pytest.raises(catalog.StrategyError, match="--workdir"):
    catalog.strategy("optimal", catalog.Context(layout, roll))
