"""How far a sweep moved the values: the norm a solve converges in
(docs/model.md §5).

Absolute: |new - old|. Relative: |new - old| / new, less what rounding
alone moves: a win probability near 0 is built from one less a value near
1 (the opponent's chance, or the other seats'), so it carries an absolute
rounding of about one unit in the last place of 1 whatever its size. At W
= 1e-7 that unit is a relative 2.2e-9, above the published tolerance of
1e-9: measured so, the last sweeps of a solve measure rounding and a run
stops when its rounding happens to fall under the tolerance (BENCHMARKS.md,
"The last sweeps of the published model on the GPU method are rounding").
The relative norm therefore does not count the first `ROUNDING_ULPS` units
of 1's last place of a change.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

ROUNDING_ULPS = 2   # units in the last place of 1 a change may owe rounding


def rounding(dtype) -> float:
  """The absolute change the relative norm leaves uncounted."""
  return ROUNDING_ULPS * float(jnp.finfo(dtype).eps)


def changes(new: jax.Array, old: jax.Array, relative: bool) -> jax.Array:
  """Each entry's change from `old` to `new` (any equal shapes): absolute,
  or relative to `new` beyond rounding."""
  delta = jnp.abs(new - old)
  if not relative:
    return delta
  beyond = jnp.maximum(delta - rounding(new.dtype), 0)
  return beyond / jnp.maximum(new, jnp.finfo(new.dtype).tiny)


def largest(new: jax.Array, old: jax.Array, relative: bool,
            real: jax.Array | None = None) -> jax.Array:
  """[] the largest of `changes`, over the entries `real` marks (a mask
  that broadcasts against them; None: all)."""
  delta = changes(new, old, relative)
  if real is not None:
    delta = jnp.where(real, delta, 0)
  return delta.max()
