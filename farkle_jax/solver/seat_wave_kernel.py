"""A chunk's row of the N-player wavefront as one kernel (Pallas).

The two-player kernel (`wave_kernel.chunk_row`) with value vectors: a
program per tile of T columns walks the score sets, reads each option's C
channel rows for its columns straight from the ring, keeps the set's
first option best on channel 0 (the mover's chance; the other channels
follow it, as `vector_pass` decides), adds the weighted best to 6 x C
running sums (compensated), and writes the six new rows of C channels in
place: the farkle's share added, banking taken where it is worth as much
to the mover. What a farkle and a bank are worth, per column, XLA works
out before the kernel (`seat_wavefront._reads`): they read the start
vectors, a handful of gathers a column, against the ring reads of every
option. A tile of idle columns is skipped.

On a GPU it runs through Triton (`wave_kernel.TUNING`'s tile, warps and
stages); on a CPU the same kernel runs in Pallas' interpreter (tests, or
`config.solver.kernel='pallas'` there). With `Tuning.split` (the default),
as for two players, a tile has six programs, one per dice count, each
with C sums instead of 6 x C: compiled for an H100, 48 registers a thread
for three players against 126 for a program per tile (ptxas of the
compiled kernel; a launch's occupancy bound 4 blocks of 128 threads a
multiprocessor at 126). Timed on an H200 only per tile (0.08 s a sweep
of the tiny three-player Facebook game).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from farkle_jax.game.layout import N_DICE
from farkle_jax.solver import wave_kernel
from farkle_jax.solver.wave_kernel import Tuning


def _option(ring_ref, source_ref, gain_ref, cur, cols, margin, s, j,
            channels: int) -> list:
  """[C] x [T] option j of set s over a tile; a gain past a key's last row
  wins (channel 0: 1, the others 0)."""
  won = gain_ref[s, j] > margin
  row = source_ref[s, j] * channels
  dtype = ring_ref.dtype
  return [jnp.where(won, jnp.full(won.shape, 1.0 if c == 0 else 0.0, dtype),
                    ring_ref[cur, row + c, cols]) for c in range(channels)]


def _best(read, options: int) -> list:
  """A set's first option with the highest channel 0 (`read(j)`: option
  j's channels)."""
  top = read(0)
  for j in range(1, options):   # J, a handful: unrolled
    other = read(j)
    better = other[0] > top[0]
    top = [jnp.where(better, o, t) for o, t in zip(other, top)]
  return top


def _kernel(where_ref, source_ref, gain_ref, weight_ref, prob_ref,
            margin_ref, farkle_ref, bank_ref, busy_ref, ring_ref, ring_out,
            *, tuning: Tuning, spans: tuple, channels: int):
  """One tile of T columns (`chunk_row`'s arguments, as refs), skipped
  where its columns are all idle."""
  i = pl.program_id(0)   # at the top level, as Pallas' interpreter wants
  # With `tuning.split`, a program per tile and dice count (the counts with
  # the most sets first), as two players.
  n = N_DICE - 1 - pl.program_id(1) if tuning.split else None
  pl.when(busy_ref[i] != 0)(functools.partial(
      _tile, i, n, where_ref, source_ref, gain_ref, weight_ref, prob_ref,
      margin_ref, farkle_ref, bank_ref, ring_ref, ring_out, tuning=tuning,
      spans=spans, channels=channels))


def _tile(i, n, where_ref, source_ref, gain_ref, weight_ref, prob_ref,
          margin_ref, farkle_ref, bank_ref, ring_ref, ring_out, *,
          tuning: Tuning, spans: tuple, channels: int):
  """`_kernel`'s work on a tile with a live column: the rows of dice
  count n (traced), or of all six where n is None."""
  # ring_out is ring_ref (aliased): the rows written are not rows read at
  # this step.
  T, C = tuning.tile, channels
  cur, first = where_ref[0], where_ref[2]
  mine = pl.ds(i * T, T)                 # this tile of the chunk's vectors
  cols = pl.ds(first + i * T, T)         # and of the ring
  margin = margin_ref[mine]

  def bests(first_set, count, options):
    return [_best(functools.partial(
        _option, ring_ref, source_ref, gain_ref, cur, cols, margin,
        first_set + u, channels=C), options) for u in range(count)]

  def add(sums, w, best):
    return tuple(wave_kernel.kahan(x, w * b) for x, b in zip(sums, best))

  def some_sets(first_set, count, options, dice, sums):
    for u, best in enumerate(bests(first_set, count, options)):
      sums = tuple(add(sums[d], weight_ref[d, first_set + u], best)
                   if d in dice else sums[d] for d in range(N_DICE))
    return sums

  def one_count(first_set, count, options, sums):
    for u, best in enumerate(bests(first_set, count, options)):
      sums = add(sums, weight_ref[n, first_set + u], best)
    return sums

  zero = jnp.zeros((T,), ring_ref.dtype)
  count_sums = tuple((zero, zero) for _ in range(C))
  if n is None:
    rows = enumerate(wave_kernel.each_set(
        spans, tuning, some_sets, (count_sums,) * N_DICE))
  else:
    rows = [(n, wave_kernel.each_set_of(spans, tuning, n, one_count,
                                        count_sums))]
  farkle = [farkle_ref[c, mine] for c in range(C)]
  bank = [bank_ref[c, mine] for c in range(C)]
  at = where_ref[1]
  for d, sums in rows:
    value = [total + prob_ref[d] * f for (total, _), f in zip(sums, farkle)]
    take = bank[0] >= value[0]     # banking wins ties, as `vector_pass`
    for c in range(C):
      ring_out[cur, at + d * C + c, cols] = jnp.where(take, bank[c],
                                                      value[c])


def chunk_row(ring: jax.Array, where: jax.Array, source: jax.Array,
              gain: jax.Array, weight: jax.Array, farkle_prob: jax.Array,
              margin: jax.Array, farkle: jax.Array, bank: jax.Array,
              busy: jax.Array, *, spans: tuple, interpret: bool,
              tuning: Tuning | None = None) -> jax.Array:
  """The ring with the six new rows of C channels of a chunk of W columns
  written.

  Args:
    ring: [2, R * 6 * C, Wr] values, row (r * 6 + n) * C + c (donate it).
    where: [3] int32 (ring in use, first of the 6 C rows to write, first
      column of the chunk).
    source: [S, J] int32 ring row r * 6 + n of each score set's options at
      this step; gain: [S, J] int32 their gains; weight: [6, S]
      (`wave_row.OptionTable.weight`); farkle_prob: [6]; spans:
      `OptionTable.spans`.
    margin: [W] int32 gains past it win.
    farkle: [C, W] what a farkle is worth to each column's key.
    bank: [C, W] what banking is worth (channel 0: -inf where banking is
      not allowed).
    busy: [W] bool the column runs a key at this step (a tile of idle
      columns is skipped, its rows left as they were).
    interpret: run in Pallas' interpreter (a CPU).
    tuning: the kernel's cut (default `wave_kernel.TUNING`).
  """
  tuning = tuning or wave_kernel.TUNING
  C = farkle.shape[0]
  kernel = functools.partial(_kernel, tuning=tuning, spans=spans,
                             channels=C)
  return wave_kernel.launch(
      kernel, "seat_wave_chunk_row", tuning, interpret,
      (where, source, gain, weight, farkle_prob, margin, farkle, bank,
       wave_kernel.busy_tiles(busy, tuning.tile), ring), 1)[0]
