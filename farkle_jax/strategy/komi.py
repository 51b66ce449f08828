"""Komi: the start score of the second player that makes the game fairest
(docs/model.md §6.6)."""

from __future__ import annotations

import numpy as np

from farkle_jax.game.layout import StateLayout


def komi(w0: np.ndarray, layout: StateLayout, k_max: int = 1000
         ) -> list[tuple[int, float]]:
  """[(k, first player's win probability when the second starts with k)]
  for k = 0 .. k_max in score steps (below the goal), both playing
  optimally (f = e = 0)."""
  k_max = min(k_max, layout.rules.goal - layout.unit)
  return [(k, float(w0[layout.opening_key(0, k)]))
          for k in range(0, k_max + 1, layout.unit)]


def fairest(curve: list[tuple[int, float]]) -> tuple[int, float]:
  """The (k, W) of a komi curve closest to an even game."""
  return min(curve, key=lambda kw: abs(kw[1] - 0.5))
