"""The norm a solve converges in: relative changes beyond rounding."""

import functools
import math
import operator

import jax.numpy as jnp
import numpy as np

from farkle_jax.solver import change_norm

EPS = 2.0 ** -52


def test_the_relative_norm_leaves_two_units_of_ones_last_place():
  assert change_norm.rounding(jnp.float64) == 2 * EPS
  assert change_norm.rounding(jnp.float32) == 2 * 2.0 ** -23
  new = jnp.array([1e-7, 1e-7, 0.5, 0.0])
  old = new + jnp.array([2 * EPS, 1e-12, 1e-10, 0.0])
  got = np.asarray(change_norm.changes(new, old, relative=True))
  assert got[0] == 0.0
  assert math.isclose(got[1], (1e-12 - 2 * EPS) / 1e-7, rel_tol=1e-6)
  assert math.isclose(got[2], (1e-10 - 2 * EPS) / 0.5, rel_tol=1e-5)
  assert got[3] == 0.0            # a value of 0 unchanged: no 0 / 0


def test_the_absolute_norm_counts_every_change():
  new = jnp.array([1e-7, 0.5])
  old = new + jnp.array([2 * EPS, -1e-15])
  got = np.asarray(change_norm.changes(new, old, relative=False))
  np.testing.assert_array_equal(got, np.abs(np.asarray(new - old)))


def test_the_largest_change_counts_only_real_entries():
  new = jnp.array([[0.2, 0.3], [0.4, 0.1]])
  old = jnp.array([[0.2, 0.9], [0.5, 0.1]])
  real = jnp.array([True, False])
  assert float(change_norm.largest(new, old, False, real[None])) == (
      float(jnp.abs(new - old)[:, 0].max()))
  assert float(change_norm.largest(new, old, False)) == float(
      jnp.abs(new - old).max())


def test_a_complement_near_zero_moves_by_rounding_alone():
  """W = 1 - (a sum of six chances near 1): summed in two orders, W
  differs by a unit or two of the last place below 1, a relative change
  above the published 1e-9 where W is near 1e-7; the norm counts none of
  it."""
  rng = np.random.default_rng(7)
  plain = []
  for _ in range(200):
    p = rng.random(6)
    p = p / p.sum() * (1 - 1e-7)
    # Added one after another (Python 3.12's sum() compensates: both
    # orders would round alike).
    w_one = 1 - functools.reduce(operator.add, p.tolist())
    w_two = 1 - functools.reduce(operator.add, p[::-1].tolist())
    new, old = jnp.array([w_one]), jnp.array([w_two])
    assert float(change_norm.largest(new, old, relative=True)) == 0.0
    plain.append(abs(w_one - w_two) / w_one)
  assert max(plain) > 1e-9
