"""The state layout: counts and every piece of its index arithmetic."""

import json
import os

import jax.numpy as jnp
import numpy as np

from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import N_DICE, StateLayout

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))
SMALL = StateLayout(rules_lib.facebook(floor=-500, goal=1000), chunk_keys=64)


def test_facebook_state_count_matches_model():
  layout = StateLayout(rules_lib.facebook(floor=-2500))
  assert layout.num_states == PUBLISHED["facebook"]["state_count"]
  assert layout.key_shape == (250, 250, 3, 3)
  assert layout.num_rows == 250  # t = 0 .. 12450


def test_keys_round_trip_and_scores():
  layout = SMALL
  fields = layout.key_fields()
  np.testing.assert_array_equal(layout.key_index(*fields),
                                np.arange(layout.num_keys))
  assert layout.points(layout.index_of(-250)) == -250
  assert layout.opening_key(0, 300) == (10, 16, 0, 0)


def test_farkle_and_bank_transitions():
  layout = SMALL
  b, d, f, e = (np.array([x]) for x in (layout.index_of(-250),
                                        layout.index_of(300), 2, 1))
  # Third farkle: 500 lost, clamped at the floor, the opponent to move.
  k = layout.farkle_index((b, d, f, e))[0]
  assert np.unravel_index(k, layout.key_shape) == (
      layout.index_of(300), layout.index_of(-500), 1, 0)
  k = layout.farkle_index((b, d, np.array([0]), e))[0]
  assert np.unravel_index(k, layout.key_shape) == (
      layout.index_of(300), layout.index_of(-250), 1, 1)
  # jnp inside kernels gives the same fields.
  got = layout.farkle_fields((jnp.asarray(b), d, f, e), jnp)
  assert [int(x[0]) for x in got] == [16, 0, 1, 0]
  # Banking 300 from b=-250: the opponent starts at (300, 50, 1, 0).
  base = layout.bank_base((b, d, f, e))[0]
  idx = base + 6 * layout.bank_stride
  assert idx == layout.padded_index(layout.index_of(300),
                                    layout.index_of(50), 1, 0)


def test_padded_start_vector():
  layout = SMALL
  w0 = np.random.default_rng(0).uniform(size=layout.key_shape)
  vec = layout.padded_start(w0)
  assert vec.shape == (layout.padded_size,) and vec[layout.sink] == 0
  np.testing.assert_array_equal(layout.unpad(vec), w0)
  fields = layout.key_fields()
  np.testing.assert_array_equal(vec[layout.padded_index(*fields)],
                                w0.reshape(-1))
  np.testing.assert_array_equal(layout.padded_start(jnp.asarray(w0), jnp),
                                vec)
  # Banking from key k: 1 - W0 of (d, b + t, e, 0), and 1 once the bank wins.
  b, d, f, e = (x[[7, 500]] for x in fields)
  vals = layout.bank_values(vec, (b, d, f, e), layout.num_rows + 1)
  for i in range(2):
    for t in range(layout.num_rows + 1):
      if b[i] + t < layout.num_scores:
        assert vals[i, t] == 1 - w0[d[i], b[i] + t, e[i], 0]
      else:
        assert vals[i, t] == 1


def test_turn_offsets_and_win_row():
  layout = SMALL
  T = layout.num_rows
  assert layout.turn_offset(3, 6) == 3 * N_DICE + 5
  assert layout.row_of(layout.turn_offset(3, 6)) == 3
  options = np.array([layout.turn_offset(2, 4), layout.turn_offset(T, 1)])
  np.testing.assert_array_equal(
      layout.reached_offset(1, options),
      [layout.turn_offset(3, 4), layout.turn_offset(T, 1)])
  assert layout.t_max(0) == T - 1
  assert layout.t_max(layout.num_scores - 1) == layout.bank_min - 1
  assert int(layout.t_max(jnp.asarray(3), jnp)) == layout.t_max(3)


def test_terminal_rows_are_beyond_t_max():
  layout = StateLayout(rules_lib.minimal(goal=1000), chunk_keys=100)
  mask = layout.terminal_mask()
  b = layout.chunk_fields()[0].reshape(layout.num_chunks, layout.chunk_keys)
  for c in range(layout.num_chunks):
    for j in (0, 57):
      top = layout.t_max(b[c, j])
      assert not mask[c, :top + 1, 0, j].any()
      assert mask[c, top + 1:, 0, j].all()
  values = np.arange(np.prod(layout.value_shape), dtype=float).reshape(
      layout.value_shape)
  w0 = layout.start_values(values)
  c, j = divmod(123, layout.chunk_keys)
  assert w0.reshape(-1)[123] == values[c, 0, N_DICE - 1, j]


def test_a_raised_key_is_the_nearest_key_of_its_sum():
  """`raised_key`: of the keys of the given score sum with the same farkle
  counts and neither score lower, the one whose second score is highest
  (enumerated)."""
  layout = StateLayout(rules_lib.facebook(floor=-500, goal=1000))
  B, D, F, E = layout.key_shape
  rng = np.random.default_rng(0)
  for b, d, f, e in rng.integers(0, [B, D, F, E], size=(200, 4)):
    for total in range(b + d + 1, B + D - 1):
      found = layout.raised_key(layout.padded_index(b, d, f, e), total)
      best = max(((b2, total - b2) for b2 in range(b, B)
                  if d <= total - b2 < D), key=lambda k: k[1])
      assert found == layout.padded_index(*best, f, e)
