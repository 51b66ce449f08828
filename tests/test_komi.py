"""Komi: the start values of a solved run, checked by exact evaluation."""

import pytest

from farkle_jax.strategy import evaluation, komi, policies


def test_komi_is_the_evaluated_start_value(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  curve = komi.komi(w0, layout, 300)
  assert [k for k, _ in curve] == [0, 50, 100, 150, 200, 250, 300]
  opt = policies.optimal(w0, layout, roll)
  for k, w in curve[::3]:
    res = evaluation.evaluate(opt, opt, layout, roll, start=(0, k))
    assert res.first == pytest.approx(w, abs=1e-12)
  # A head start helps the second player: the curve falls.
  assert all(a[1] > b[1] for a, b in zip(curve, curve[1:]))
  k, w = komi.fairest(curve)
  assert abs(w - 0.5) == min(abs(x - 0.5) for _, x in curve)
