"""State layout: counts, index tables and memory estimate."""

import json
import os

import numpy as np

from farkle_jax import rules as rules_lib
from farkle_jax.layout import StateLayout

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))


def test_facebook_state_count_matches_model():
  layout = StateLayout(rules_lib.facebook(floor=-2500))
  assert layout.num_states == PUBLISHED["facebook"]["state_count"]
  assert layout.key_shape == (250, 250, 3, 3)
  assert layout.num_rows == 250  # t = 0 .. 12450


def test_farkle_and_bank_indices():
  r = rules_lib.facebook(floor=-500, goal=1000)
  layout = StateLayout(r, chunk_keys=64)
  b, d, f, e = (np.array([x]) for x in (layout.index_of(-250),
                                        layout.index_of(300), 2, 1))
  # Third farkle: 500 lost, clamped at the floor, the opponent to move.
  k = layout.farkle_index((b, d, f, e))[0]
  assert np.unravel_index(k, layout.key_shape) == (
      layout.index_of(300), layout.index_of(-500), 1, 0)
  k = layout.farkle_index((b, d, np.array([0]), e))[0]
  assert np.unravel_index(k, layout.key_shape) == (
      layout.index_of(300), layout.index_of(-250), 1, 1)
  # Banking 300 from b=-250: the opponent starts at (300, 50, 1, 0).
  base = layout.bank_base((b, d, f, e))[0]
  B, D, F, E = layout.key_shape
  padded = (B, D + layout.bank_padding(), F, E)
  idx = base + 6 * F * E
  assert np.unravel_index(idx, padded) == (
      layout.index_of(300), layout.index_of(50), 1, 0)


def test_terminal_rows_are_beyond_t_max():
  layout = StateLayout(rules_lib.minimal(goal=1000), chunk_keys=100)
  mask = layout.terminal_mask()
  b = layout.key_fields()[0].reshape(layout.num_chunks, layout.chunk_keys)
  for c in range(layout.num_chunks):
    for j in (0, 57):
      top = layout.t_max(b[c, j])
      assert not mask[c, :top + 1, 0, j].any()
      assert mask[c, top + 1:, 0, j].all()


def test_memory_estimate_grows_with_floor():
  small = StateLayout(rules_lib.facebook(floor=-2500)).memory_bytes()
  big = StateLayout(rules_lib.facebook(floor=-10_000)).memory_bytes()
  assert 5e9 < small < big
