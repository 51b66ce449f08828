"""A chunk's row of the wavefront as one kernel (Pallas).

`wave_row.row_step` is XLA's: it gathers the row's D distinct targets into
a [D, C] block, gathers each score set's options from it into [S, J, C],
reduces and weighs: each a fusion of its own, each fusion charged the
arrays it reads from. This kernel does the same arithmetic in one pass: a
program per tile of T columns walks the score sets, reads each option's
ring row for its T columns straight from the ring (the D rows of a tile
are reused J x S times from cache), keeps the set's best and the slope of
its first best option in registers, adds the weighted best to six running
sums, and writes the six new rows into the ring in place. Nothing of the
row but the ring itself touches memory. A tile whose columns are all idle
at the step is skipped (on `facebook`, 20 % of a sweep's column-steps).

On a GPU it runs through Triton (`Tuning`: programs of 128 columns, a
power of two as Triton's blocks must be); on a CPU (tests, or
`config.solver.kernel='pallas'` there) the same kernel runs in Pallas'
interpreter. The sums run over the sets in order, compensated, where
XLA's dot picks its own order: the two agree to XLA's rounding (1.2e-15
seen on a CPU, 2.1e-15 on a GPU).

A launch is bound by the latency of its reads, not their bytes: with a
program per tile, a `facebook` launch of 475 programs filled 0.4 of an
H200's waves, 22 % of its warps active, each mostly waiting on a load
(Nsight Compute: 137 us, 8 % of DRAM bandwidth). `Tuning.split` (the
default) gives each tile six programs, one per dice count, each adding
the sets of its dice count only (the sets are grouped so: `spans`), one
sum instead of six: 45 % of the warps active, 68 us a launch, and a
sweep 0.284 -> 0.161 s with the steps in half as many chunks
(`wave_schedule.KERNEL_CHUNKS`; BENCHMARKS.md, "A program per dice
count"). `held_row` reads each row once per tile and keeps it on chip,
its sets constants of its program (`Tuning.held`; compiles for an H100
in about 40 s; 0.26 s a sweep on an H200 before the split). Without
the split, `Tuning.per_dice` adds each set to its own dice count's sum
alone, in a loop per option count and dice count.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

from farkle_jax.game.layout import N_DICE


class Tuning(NamedTuple):
  """How the kernel is cut for Triton (measured on one H200: BENCHMARKS.md,
  "The published model on an H200 ...; the fused step measured")."""
  tile: int = 128    # T, columns of one program (a power of two)
  unroll: int = 1    # score sets a loop iteration reads at once
  warps: int = 4     # Triton's num_warps
  stages: int = 1    # Triton's num_stages
  held: bool = False  # the row's targets held, each read once (`held_row`)
  per_dice: bool = False  # each set added to its own dice count's sum
                          #   alone (the sets in a loop per option count
                          #   and dice count)
  split: bool = True  # a program per tile and dice count (a grid of
                      #   [tiles, 6]), each adding that count's sets


TUNING = Tuning()
MOVE_TILE = 128   # columns of one program of the move kernel


def kahan(acc: tuple[jax.Array, jax.Array], term: jax.Array
           ) -> tuple[jax.Array, jax.Array]:
  """(sum, lost low-order part) after adding `term`."""
  total, lost = acc
  y = term - lost
  t = total + y
  return t, (t - total) - y


def _target(ring_ref, tangent_ref, cur, row, cols, won, sloped: bool):
  """(values, slopes or None) of a target's ring row over a tile's columns;
  where `won` (a gain past the key's last row) 1 and slope 0."""
  value = jnp.where(won, jnp.ones(won.shape, ring_ref.dtype),
                    ring_ref[cur, row, cols])
  if not sloped:
    return value, None
  return value, jnp.where(won, jnp.zeros(won.shape, tangent_ref.dtype),
                          tangent_ref[cur, row, cols])


def _first_best(targets) -> tuple:
  """The best of a set's options (values, slopes) and the slope of the
  first best: a later option's slope only for a larger value."""
  best, tan = targets[0]
  for value, slope in targets[1:]:
    if tan is not None:
      tan = jnp.where(value > best, slope, tan)
    best = jnp.maximum(best, value)
  return best, tan


def _best(ring_ref, tangent_ref, source_ref, gain_ref, cur, cols, margin,
          s, options: int, sloped: bool):
  """Set s's best option over T columns and the slope of its first best."""
  return _first_best([   # J, a handful: unrolled
      _target(ring_ref, tangent_ref, cur, source_ref[s, j], cols,
              gain_ref[s, j] > margin, sloped) for j in range(options)])


def _kernel(where_ref, source_ref, gain_ref, weight_ref, prob_ref,
            margin_ref, vector_ref, farkle_ref, bank_ref, busy_ref, ring_ref,
            tangent_ref, ring_out, tangent_out, *, tuning: Tuning,
            spans: tuple, sloped: bool):
  """One tile of T columns (`chunk_row`'s arguments, as refs), skipped
  where its columns are all idle; `spans`: `OptionTable.spans`, each
  group of sets read for its own number of options only."""
  # The program's index read here, outside the branch: Pallas'
  # interpreter gives it at the kernel's top level only.
  i = pl.program_id(0)
  tile = _split_tile if tuning.split else _tile
  refs = (where_ref, source_ref, gain_ref, weight_ref, prob_ref,
          margin_ref, vector_ref, farkle_ref, bank_ref, ring_ref,
          tangent_ref, ring_out, tangent_out)
  if tuning.split:   # the dice counts with the most sets first
    refs = (N_DICE - 1 - pl.program_id(1),) + refs
  pl.when(busy_ref[i] != 0)(functools.partial(
      tile, i, *refs, tuning=tuning, spans=spans, sloped=sloped))


def _tile(i, where_ref, source_ref, gain_ref, weight_ref, prob_ref, margin_ref,
          vector_ref, farkle_ref, bank_ref, ring_ref, tangent_ref, ring_out,
          tangent_out, *, tuning: Tuning, spans: tuple, sloped: bool):
  """`_kernel`'s work on a tile with a live column."""
  # ring_out and tangent_out are ring_ref and tangent_ref (aliased): the
  # rows written are not rows read at this step.
  T = tuning.tile
  cur, first = where_ref[0], where_ref[2]
  mine = pl.ds(i * T, T)                 # this tile of the chunk's vectors
  cols = pl.ds(first + i * T, T)         # and of the ring
  margin = margin_ref[mine]
  dtype, slope_dtype = ring_ref.dtype, tangent_ref.dtype

  def some_sets(first_set, count, options, dice, sums):
    totals, tangents = sums
    # Several sets at once: their reads are independent, so they are in
    # flight together instead of one set's latency after another's.
    bests = [_best(ring_ref, tangent_ref, source_ref, gain_ref, cur, cols,
                   margin, first_set + u, options, sloped)
             for u in range(count)]
    for u, (best, tan) in enumerate(bests):
      # Running sums, one per dice count (vectors of T: Triton keeps them
      # in registers, and slices of a 2-D block it would not lower),
      # compensated (Kahan): the sum is then exact to about an ulp,
      # whatever order XLA's product takes its terms in. A set weighs
      # into one dice count: only that sum moves.
      w = {n: weight_ref[n, first_set + u] for n in dice}
      totals = tuple(kahan(x, w[n] * best) if n in w else x
                     for n, x in enumerate(totals))
      if sloped:
        tangents = tuple(x + w[n].astype(slope_dtype) * tan if n in w
                         else x for n, x in enumerate(tangents))
    return totals, tangents

  zeros = lambda dt: tuple(jnp.zeros((T,), dt) for _ in range(N_DICE))
  sums = (tuple(zip(zeros(dtype), zeros(dtype))), zeros(slope_dtype))
  totals, tangents = each_set(spans, tuning, some_sets, sums)
  _write_rows([(n, total, tangents[n]) for n, (total, _)
               in enumerate(totals)], mine, cols, where_ref, prob_ref,
              vector_ref, farkle_ref, bank_ref, ring_out, tangent_out,
              sloped)


def _split_tile(i, n, where_ref, source_ref, gain_ref, weight_ref,
                prob_ref, margin_ref, vector_ref, farkle_ref, bank_ref,
                ring_ref, tangent_ref, ring_out, tangent_out, *,
                tuning: Tuning, spans: tuple, sloped: bool):
  """`_tile` for one dice count n (a traced scalar): the sets weighing
  into n only, one sum, one row written. Six programs share a tile, so a
  launch has six times the warps to hide its reads' latency behind."""
  T = tuning.tile
  cur, first = where_ref[0], where_ref[2]
  mine, cols = pl.ds(i * T, T), pl.ds(first + i * T, T)
  margin = margin_ref[mine]
  dtype, slope_dtype = ring_ref.dtype, tangent_ref.dtype

  def some_sets(first_set, count, options, sums):
    total, tangent = sums
    bests = [_best(ring_ref, tangent_ref, source_ref, gain_ref, cur, cols,
                   margin, first_set + u, options, sloped)
             for u in range(count)]
    for u, (best, tan) in enumerate(bests):
      w = weight_ref[n, first_set + u]
      total = kahan(total, w * best)
      if sloped:
        tangent = tangent + w.astype(slope_dtype) * tan
    return total, tangent

  zeros = lambda dt: jnp.zeros((T,), dt)
  sums = ((zeros(dtype), zeros(dtype)), zeros(slope_dtype))
  (total, _), tangent = each_set_of(spans, tuning, n, some_sets, sums)
  _write_rows([(n, total, tangent)], mine, cols, where_ref, prob_ref,
              vector_ref, farkle_ref, bank_ref, ring_out, tangent_out,
              sloped)


def each_set_of(spans: tuple, tuning: Tuning, n: jax.Array, some_sets,
                sums):
  """`sums` after the score sets of dice count n (traced), in order,
  `tuning.unroll` at a time: `some_sets(first, count, options, sums)`.
  The loops' bounds are n's, chosen among the spans' at run time: one
  loop per option count, as many as `each_set` has without `per_dice`."""
  U = tuning.unroll
  bounds = {}
  for options, dice, lo, hi in spans:
    first, end = bounds.get(options, (np.int32(0), np.int32(0)))
    bounds[options] = (jnp.where(n == dice, np.int32(lo), first),
                       jnp.where(n == dice, np.int32(hi), end))
  for options, (lo, hi) in bounds.items():
    # lax.div: Triton's lowering of `//` on a run-time int fails, and the
    # counts are not negative.
    whole = jax.lax.div(hi - lo, np.int32(U))
    sums = jax.lax.fori_loop(
        0, whole, lambda g, sums, lo=lo, j=options: some_sets(
            lo + g * U, U, j, sums), sums)
    if U > 1:
      rest = lo + whole * U
      sums = jax.lax.fori_loop(
          0, hi - rest, lambda g, sums, rest=rest, j=options: some_sets(
              rest + g, 1, j, sums), sums)
  return sums


def each_set(spans: tuple, tuning: Tuning, some_sets, sums):
  """`sums` after every score set, in order, U (`tuning.unroll`) at a
  time: `some_sets(first, count, options, dice counts, sums)` adds sets
  first .. first + count - 1, of `options` options each."""
  U = tuning.unroll
  for options, dice, lo, hi in _set_loops(spans, tuning.per_dice):
    sums = jax.lax.fori_loop(
        0, (hi - lo) // U,
        lambda g, sums, lo=lo, j=options, d=dice: some_sets(
            lo + g * U, U, j, d, sums),
        sums)
    if (hi - lo) % U:
      sums = some_sets(hi - (hi - lo) % U, (hi - lo) % U, options, dice,
                       sums)
  return sums


def _set_loops(spans: tuple, per_dice: bool) -> list:
  """(options, dice counts, first, end) of each loop over sets: a span
  each (`OptionTable.spans`), or with `per_dice` off the spans of one
  option count merged, each set added to all six sums (its weight 0 in
  five of them)."""
  if per_dice:
    return [(j, (n,), lo, hi) for j, n, lo, hi in spans]
  merged = []
  for j, _, lo, hi in spans:
    if merged and merged[-1][0] == j:
      merged[-1] = (j, merged[-1][1], merged[-1][2], hi)
    else:
      merged.append((j, tuple(range(N_DICE)), lo, hi))
  return merged


def _write_rows(rows, mine, cols, where_ref, prob_ref, vector_ref,
                farkle_ref, bank_ref, ring_out, tangent_out,
                sloped: bool) -> None:
  """A tile's new rows from their sums, `rows` (dice count, sum, slope
  sum) each: the farkle's share added, the better of that and banking
  written (and the slopes, if `sloped`)."""
  cur, at = where_ref[0], where_ref[1]
  dtype, slope_dtype = ring_out.dtype, tangent_out.dtype
  x_farkle = 1 - vector_ref[farkle_ref[mine]]
  at_bank = bank_ref[mine]
  bank = jnp.where(at_bank >= 0, 1 - vector_ref[jnp.maximum(at_bank, 0)],
                   jnp.full(x_farkle.shape, -jnp.inf, dtype))
  for n, total, tangent in rows:
    value = total + prob_ref[n] * x_farkle
    ring_out[cur, at + n, cols] = jnp.maximum(value, bank)
    if sloped:   # banking wins ties: its slope is 0
      slope = tangent + prob_ref[n].astype(slope_dtype)
      tangent_out[cur, at + n, cols] = jnp.where(
          bank >= value, jnp.zeros(x_farkle.shape, slope_dtype), slope)


def busy_tiles(busy: jax.Array, tile: int) -> jax.Array:
  """[C / tile] int32: 1 where a tile of `busy` [C] has a live column."""
  if busy.shape[0] % tile:
    raise ValueError(f"a chunk of {busy.shape[0]} columns in tiles of "
                     f"{tile}: they must divide it")
  return busy.reshape(-1, tile).any(axis=1).astype(jnp.int32)


def launch(kernel, name: str, tuning: Tuning, interpret: bool,
           inputs: tuple, updated: int) -> tuple[jax.Array, ...]:
  """`kernel` over a chunk's tiles, a program each; the last `updated`
  inputs (the rings) are updated in place and returned; the one before
  them has one entry per tile of the chunk (`busy_tiles`)."""
  first = len(inputs) - updated
  anywhere = pl.BlockSpec(memory_space=pl.ANY)
  params = {} if interpret else {"compiler_params": _triton_params(tuning)}
  tiles = inputs[first - 1].shape[0]
  return pl.pallas_call(
      kernel, grid=(tiles, N_DICE) if tuning.split else (tiles,),
      out_shape=tuple(jax.ShapeDtypeStruct(x.shape, x.dtype)
                      for x in inputs[first:]),
      in_specs=[anywhere] * len(inputs), out_specs=(anywhere,) * updated,
      input_output_aliases={first + i: i for i in range(updated)},
      interpret=interpret, name=name, **params)(*inputs)


def chunk_row(ring: jax.Array, tangent: jax.Array, where: jax.Array,
              source: jax.Array, gain: jax.Array, weight: jax.Array,
              farkle_prob: jax.Array, margin: jax.Array, vector: jax.Array,
              at_farkle: jax.Array, at_bank: jax.Array, busy: jax.Array, *,
              spans: tuple, sloped: bool, interpret: bool,
              tuning: Tuning | None = None) -> tuple[jax.Array, jax.Array]:
  """The rings with the six new rows of a chunk of C columns written.

  Args:
    ring: [2, R * 6, W] values; tangent: [2, R * 6, Ws] slopes (donate).
    where: [3] int32 (ring in use, first of the six rows to write, first
      column of the chunk).
    source: [S, J] int32 ring row of each score set's options at this
      step; gain: [S, J] int32 their gains (`OptionTable.index` of the
      row's targets); weight: [6, S] (`OptionTable.weight`);
      farkle_prob: [6]; spans: `OptionTable.spans` (only a set's own
      options are read, not the padding).
    margin: [C] int32 gains past it win; vector: [V] padded start values;
      at_farkle: [C] int32 where a farkle reads it (1 - that value); at_bank:
      [C] int32 where banking does (-1: banking is not allowed).
    busy: [C] bool the column runs a key at this step: a tile of idle
      columns is skipped, its rows left as they were (no key reads them).
    sloped: also the slopes (the chunk's keys need them).
    interpret: run in Pallas' interpreter (a CPU).
    tuning: the kernel's cut (default `TUNING`).

  Returns:
    (ring, tangent) updated in place.
  """
  tuning = tuning or TUNING
  kernel = functools.partial(_kernel, tuning=tuning, spans=spans,
                             sloped=sloped)
  return launch(kernel, "wave_chunk_row", tuning, interpret,
                (where, source, gain, weight, farkle_prob, margin, vector,
                 at_farkle, at_bank, busy_tiles(busy, tuning.tile), ring,
                 tangent), 2)


def _held_kernel(where_ref, source_ref, prob_ref, margin_ref, vector_ref,
                 farkle_ref, bank_ref, busy_ref, ring_ref, tangent_ref,
                 ring_out, tangent_out, *, row, tile: int, sloped: bool):
  """One tile of `held_row`, skipped where its columns are all idle."""
  i = pl.program_id(0)   # outside the branch, as in `_kernel`
  pl.when(busy_ref[i] != 0)(functools.partial(
      _held_tile, i, where_ref, source_ref, prob_ref, margin_ref, vector_ref,
      farkle_ref, bank_ref, ring_ref, tangent_ref, ring_out, tangent_out,
      row=row, tile=tile, sloped=sloped))


def _held_tile(i, where_ref, source_ref, prob_ref, margin_ref, vector_ref,
               farkle_ref, bank_ref, ring_ref, tangent_ref, ring_out,
               tangent_out, *, row, tile: int, sloped: bool):
  """A tile of `held_row` with a live column: each distinct target read
  once, at its first use, and every score set's best taken from those
  (the sets, options and weights are constants of the program)."""
  cur, first = where_ref[0], where_ref[2]
  mine, cols = pl.ds(i * tile, tile), pl.ds(first + i * tile, tile)
  margin = margin_ref[mine]
  dtype, slope_dtype = ring_ref.dtype, tangent_ref.dtype
  zeros = lambda dt: jnp.zeros((tile,), dt)
  held = {}

  def read(d):
    if d not in held:
      held[d] = _target(ring_ref, tangent_ref, cur, source_ref[d], cols,
                        margin < row.gains[d], sloped)
    return held[d]

  totals = [(zeros(dtype), zeros(dtype)) for _ in range(N_DICE)]
  tangents = [zeros(slope_dtype) for _ in range(N_DICE)]
  for n in range(N_DICE):
    sets = [options for group in row.sets[n] for options in group]
    for options, p in zip(sets, row.weights[n]):
      best, tan = _first_best([read(d) for d in options])
      totals[n] = kahan(totals[n], p * best)
      if sloped:
        tangents[n] = tangents[n] + np.float32(p) * tan
  _write_rows([(n, total, tangents[n]) for n, (total, _)
               in enumerate(totals)], mine, cols, where_ref, prob_ref,
              vector_ref, farkle_ref, bank_ref, ring_out, tangent_out,
              sloped)


def held_row(ring: jax.Array, tangent: jax.Array, where: jax.Array,
             source: jax.Array, farkle_prob: jax.Array, margin: jax.Array,
             vector: jax.Array, at_farkle: jax.Array, at_bank: jax.Array,
             busy: jax.Array, *, row, sloped: bool, interpret: bool,
             tuning: Tuning | None = None) -> tuple[jax.Array, jax.Array]:
  """`chunk_row` with each of the row's D distinct targets read once per
  tile and held on chip while the score sets take their best: D row reads
  a tile instead of one per option (102 against 823 for `facebook`), at
  the cost of a program that names every set (`row`, a constant).

  Args:
    source: [D] int32 the ring row of each distinct target at this step;
    row: the `bellman.RowPlan` (its gains, sets and weights);
    the others as for `chunk_row`.
  """
  # One program per tile: it names the sets of all six dice counts.
  tuning = (tuning or TUNING)._replace(split=False)
  kernel = functools.partial(_held_kernel, row=row, tile=tuning.tile,
                             sloped=sloped)
  return launch(kernel, "wave_held_row", tuning, interpret,
                (where, source, farkle_prob, margin, vector, at_farkle,
                 at_bank, busy_tiles(busy, tuning.tile), ring, tangent), 2)


def _triton_params(tuning: Tuning):
  from jax.experimental.pallas import triton as pallas_triton
  return pallas_triton.CompilerParams(num_warps=tuning.warps,
                                      num_stages=tuning.stages)


def _move_kernel(where_ref, carry_ref, ring_ref, ring_out):
  """One tile: every ring row of MOVE_TILE columns, from the other ring."""
  i = pl.program_id(0)
  dst, src, first = where_ref[0], where_ref[1], where_ref[2]
  carry = carry_ref[pl.ds(i * MOVE_TILE, MOVE_TILE)]
  cols = pl.ds(first + i * MOVE_TILE, MOVE_TILE)

  def row(r, _):
    ring_out[dst, r, cols] = ring_ref[src, r, carry]
    return _

  jax.lax.fori_loop(0, ring_ref.shape[1], row, 0)


def move_columns(ring: jax.Array, where: jax.Array, carry: jax.Array, *,
                 interpret: bool) -> jax.Array:
  """ring[dst, :, first:first + C] = ring[src, :, carry], in place.

  Args:
    ring: [2, R * 6, W] (donate it); where: [3] int32 (dst, src, first);
    carry: [C] int32 the column each of the C columns takes its ring from.
    interpret: run in Pallas' interpreter (a CPU).
  """
  anywhere = pl.BlockSpec(memory_space=pl.ANY)
  params = {} if interpret else {"compiler_params": _triton_params(Tuning())}
  return pl.pallas_call(
      _move_kernel, grid=(carry.shape[0] // MOVE_TILE,),
      out_shape=jax.ShapeDtypeStruct(ring.shape, ring.dtype),
      in_specs=[anywhere] * 3, out_specs=anywhere,
      input_output_aliases={2: 0}, interpret=interpret,
      name="wave_move_columns", **params)(where, carry, ring)
