"""Komi, the go-for-it search, strategy names and the analysis CLI."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from farkle_jax import analysis, evaluation, strategies
from conftest import ROOT


def test_komi_is_the_evaluated_start_value(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  curve = analysis.komi(w0, layout, 300)
  assert [k for k, _ in curve] == [0, 50, 100, 150, 200, 250, 300]
  opt = strategies.optimal(w0, layout, roll)
  for k, w in curve[::3]:
    res = evaluation.evaluate(opt, opt, layout, roll, start=(0, k))
    assert res.first == pytest.approx(w, abs=1e-12)
  k, w = analysis.fairest(curve)
  assert abs(w - 0.5) == min(abs(x - 0.5) for _, x in curve)


def test_go_masks():
  from farkle_jax import rules
  from farkle_jax.layout import StateLayout
  layout = StateLayout(rules.minimal(goal=1000))
  masks = strategies.go_masks(layout, (500, 1000, 1000, 1000, 1000, 1000),
                              (1000, 1000, 1000, 1000, 1000, 800))
  b, d = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)[:2]
  expect = (b * 50 >= 500).astype(int) | ((d * 50 >= 800).astype(int) << 5)
  np.testing.assert_array_equal(masks, expect)


def test_go_for_it_search_improves_on_maxscore(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  ctx = analysis.Context(layout, roll, w0)
  opt = analysis.strategy("optimal", ctx)
  res = analysis.search_go_for_it(ctx, opt, coarse=250, rounds=1,
                                  log=lambda s: None)
  assert res.result.overall > res.baseline.overall
  # The reported rate is that of the named strategy, evaluated afresh.
  again = evaluation.evaluate(analysis.strategy(res.name, ctx), opt, layout,
                              roll)
  assert again.overall == pytest.approx(res.result.overall, abs=1e-14)


@pytest.mark.parametrize("name", ["bank:0", "bank:x", "goforit:1,2", "foo",
                                  "goforit:1,2,3,4,5,6"])
def test_bad_strategy_names(name, tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  with pytest.raises(analysis.StrategyError):
    analysis.strategy(name, analysis.Context(layout, roll, w0))


def _cli(*args):
  return subprocess.run([sys.executable, "-m", "farkle_jax.analyze", *args],
                        cwd=ROOT, capture_output=True, text=True,
                        env={**os.environ, "JAX_PLATFORMS": "cpu"})


def test_cli_maxscore_and_evaluate(tiny_runs):
  _, _, _, workdir = tiny_runs("minimal")
  out = _cli("maxscore", "--config", "configs/tiny.py:minimal",
             "--t_last", "200")
  assert out.returncode == 0, out.stderr
  assert "points per turn" in out.stdout and "n=6: bank from" in out.stdout
  out = _cli("evaluate", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--a", "memorized", "--b", "optimal")
  assert out.returncode == 0, out.stderr
  with open(os.path.join(workdir, "analysis",
                         "evaluate_memorized_vs_optimal.json")) as f:
    res = json.load(f)
  assert 0 < res["first"] < 1 and res["overall"] < 0.5
  out = _cli("evaluate", "--config", "configs/tiny.py:minimal", "--workdir",
             workdir, "--a", "bank:33")
  assert out.returncode == 1 and "bank:33" in out.stderr
