"""Cost of one turn pass per state: the N-player vector pass against the
two-player scalar pass, on the same keys in one process.

  python experiments/pass_cost.py [--keys 512] [--rows 100] [--repeats 5]

Each pass runs `--rows` rows of `--keys` keys of the minimal rules to
10,000 (six in-turn states per row and key); the figure is states per
second, best of `--repeats` after one warm-up call, and its ratio to the
two-player pass (the baseline, listed first).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import app, flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, vector_pass

_KEYS = flags.DEFINE_integer("keys", 512, "Keys per pass.")
_ROWS = flags.DEFINE_integer("rows", 100, "Rows (turn totals) per pass.")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed calls; the best counts.")


def _best(fn, *args) -> float:
  jax.block_until_ready(fn(*args))
  times = []
  for _ in range(_REPEATS.value):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    times.append(time.perf_counter() - t0)
  return min(times)


def two_player(k: int, top: int, rng) -> float:
  layout = StateLayout(rules_lib.minimal())
  roll = bellman.roll_arrays(roll_tables.build(layout.rules))
  rows = jnp.ones((layout.num_rows + 1, 6, k))
  padded = jnp.asarray(rng.uniform(size=layout.padded_size))
  base = jnp.asarray(rng.integers(0, layout.padded_size // 2, k), jnp.int32)
  fn = jax.jit(bellman.turn_pass, static_argnames=("layout", "relative"))
  return _best(lambda: fn(rows, jnp.full((k,), 0.3), padded, base,
                          jnp.int32(top), roll, layout=layout,
                          relative=False))


def players(n: int, k: int, top: int, rng) -> float:
  """The vector pass of n players; the start vectors it reads are 2^22
  random keys (the turn lengths are the minimal rules' to 10,000)."""
  seats = SeatsLayout(rules_lib.minimal().replace(players=n))
  roll = bellman.roll_arrays(roll_tables.build(seats.rules))
  size = 2**22
  w0 = jnp.asarray(rng.dirichlet(np.ones(n), size + 1))
  batch = vector_pass.Batch(
      farkle=jnp.asarray(rng.uniform(size=(n, k))),  # C = n channels
      bank_base=jnp.asarray(rng.integers(0, size // 2, k), jnp.int32),
      s0=jnp.zeros((k,), jnp.int32), top=jnp.int32(top))
  fn = jax.jit(vector_pass.turn_pass, static_argnames=("seats", "full"))
  return _best(fn, w0, batch, roll, seats)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  k, top = _KEYS.value, _ROWS.value - 1
  rng = np.random.default_rng(0)
  states = _ROWS.value * 6 * k
  print(f"# {jax.devices()[0].device_kind}, {k} keys x {_ROWS.value} rows")
  base = two_player(k, top, rng)
  print(f"two players (scalar)   {states / base / 1e6:8.2f} M states/s  1.00x")
  for n in (2, 3, 4):
    t = players(n, k, top, rng)
    print(f"{n} players (vector)    {states / t / 1e6:8.2f} M states/s  "
          f"{base / t:.2f}x")


if __name__ == "__main__":
  command_line.run(main)
