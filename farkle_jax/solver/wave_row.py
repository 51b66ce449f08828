"""One row of the wavefront's columns as XLA runs it: each score set's
best option among a row's distinct targets, and the slope of the first
best one, as data (docs/model.md §4.3).

A row of C columns reads the D distinct (gain, next dice) targets of the
row once ([D, C]), gathers each score set's options from that block by an
index table ([S, J, C]: J the most options of a set, padded with the
set's first option), takes the maximum, and weighs the sets by their
probabilities. The program's size does not depend on D, S or J.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import bellman

TILE = 128   # columns per tile of a row's weighted sums
SLOPE_DTYPE = jnp.float32  # slopes only steer a Newton step
INDEX_BYTES = 4            # int32 tables


class OptionTable(NamedTuple):
  """A row's score sets as data (NumPy constants of the compiled step): the
  step's program size does not grow with the number of targets or options."""
  index: np.ndarray   # [S, J] int32 targets of each set's options (pad:
                      #   its first option again, which leaves the max)
  weight: np.ndarray  # [6, S] probability of each set under each dice count
  spans: tuple[tuple[int, int, int, int], ...]  # (j, n, first, end):
                      #   sets first .. end - 1 have j options and weigh
                      #   into dice count n alone (the sets in that order)


def option_table(row: bellman.RowPlan) -> OptionTable:
  """The score sets of `row`, padded to the most options of any set, in
  order of their number of options (so that a kernel can read only the
  real ones: 823 options against 228 x 6 for facebook), then of their
  dice count (so that it adds each set to its own dice count's sum)."""
  sets = [(n, opts, p) for n in range(N_DICE)
          for opts, p in zip((o for group in row.sets[n] for o in group),
                             row.weights[n])]
  sets.sort(key=lambda set_: len(set_[1]))   # stable: by n, then as built
  J = max(len(o) for _, o, _ in sets)
  index = np.array([o + (o[0],) * (J - len(o)) for _, o, _ in sets],
                   np.int32)
  weight = np.zeros((N_DICE, len(sets)))
  for s, (n, _, p) in enumerate(sets):
    weight[n, s] = p
  keys = [(len(o), n) for n, o, _ in sets]
  spans = tuple((j, n, keys.index((j, n)),
                 len(keys) - keys[::-1].index((j, n)))
                for j, n in sorted(set(keys)))
  return OptionTable(index, weight, spans)


def tiled_product(weight: np.ndarray, x: jax.Array, dtype) -> jax.Array:
  """weight [6, R] @ x [R, ..., W] -> [6, ..., W] as products of
  fixed-size column tiles: one dense product fuses better on a CPU than
  six sums, and tiles of one size sum in one order whatever the width, so
  a run split over devices is the run on one, bit for bit."""
  R, W, mid = x.shape[0], x.shape[-1], x.shape[1:-1]
  if not W:
    return jnp.zeros((weight.shape[0],) + mid + (0,), dtype)
  m = int(np.prod(mid))
  tiles = x.reshape(R, m, W // TILE, TILE).transpose(2, 0, 1, 3).reshape(
      W // TILE, R, m * TILE)                           # [W/T, R, m T]
  w = jnp.broadcast_to(jnp.asarray(weight, dtype), (W // TILE,) + weight.shape)
  out = jax.lax.dot_general(w, tiles, (((2,), (1,)), ((0,), (0,))),
                            precision=jax.lax.Precision.HIGHEST)
  out = out.reshape(W // TILE, weight.shape[0], m, TILE).transpose(1, 2, 0, 3)
  return out.reshape((weight.shape[0],) + mid + (W,))


def row_step(block: jax.Array, tangents: jax.Array, x_farkle, bank,
             farkle_prob, options: OptionTable):
  """New values [6, W] and slopes [6, Ws] of one row of W columns.

  Args:
    block: [D, W] values of the row's distinct targets (wins: 1).
    tangents: [D, Ws] their slopes, of the first Ws columns (wins: 0).
    x_farkle: [W] value of a farkle; bank: [W] value of banking (-inf
      where not allowed); farkle_prob: [6].
    options: the row's score sets over the D targets.
  """
  ws = tangents.shape[1]
  reads = block[options.index]                           # [S, J, W]
  best = reads.max(axis=1)                               # [S, W]
  # The slope of the first best option (argmax takes the first maximum).
  first = jnp.argmax(reads[:, :, :ws], axis=1)           # [S, Ws]
  tan = jnp.take_along_axis(tangents[options.index], first[:, None],
                            axis=1)[:, 0]                # [S, Ws]
  values = tiled_product(options.weight, best, x_farkle.dtype)
  slopes = tiled_product(options.weight, tan, tangents.dtype)
  value = (values + farkle_prob[:, None].astype(x_farkle.dtype)
           * x_farkle[None])
  slope = slopes + farkle_prob[:, None].astype(slopes.dtype)
  banks = bank[None, :ws] >= value[:, :ws]   # banking wins ties
  return jnp.maximum(value, bank[None]), jnp.where(banks, 0, slope)


def column_bytes(row: bellman.RowPlan, size: int, sloped: bool = True
                 ) -> tuple[int, int]:
  """(gathered, written) bytes of one column at one step: a ring row per
  distinct target for values (and slopes, for a column of keys that need
  them), two start values (farkle, bank) and six table entries read
  (counted as int32; one is a one-byte flag); six values (and slopes)
  written."""
  slope = jnp.dtype(SLOPE_DTYPE).itemsize if sloped else 0
  return (row.num_targets * (size + slope) + 2 * size + 6 * INDEX_BYTES,
          N_DICE * (size + slope))
