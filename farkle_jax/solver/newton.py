"""The Newton correction of an ordered sweep (docs/model.md §4.2).

With a penalty, an ordered sweep reads one kind of value before this sweep
has produced it: the opponent's start value after a penalty farkle, which
lies at a lower score sum. Every other read is final. So the sweep's output
y = G(x) is an affine function of those stale reads once each turn's policy
is fixed, and the fixed point x* = G(x*) is y + delta with

    delta_k = - sum_t bank_k[t] * delta[bank target t]
              - farkle_k * (delta[farkle target] + stale_k * r[farkle target])

where bank_k[t] and farkle_k are how key k's turn ends under the policy the
sweep chose (`bellman.turn_exits`) and r = y - x is the sweep's own change.
This is one Newton step (a policy-iteration step) on the penalty reads: it
is exact when the policy is, so a few sweeps converge quadratically instead
of each sweep shrinking the error by a constant factor.

The linear system has the sweep's own structure (banks up the score sums,
penalty farkles down), so it is solved by the same ordered Gauss-Seidel
passes, over start values only: each pass costs about one multiply-add per
(key, t), a few hundred times less than a sweep. The exits are kept in
float32, flat per key for t = bank_min .. t_max(b): a Newton step tolerates
their 1e-7 relative error (the next sweep measures what is left).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import placement

EXIT_DTYPE = jnp.float32
INNER_PASSES = 40      # most Gauss-Seidel passes of one correction
INNER_SHRINK = 1e-6    # passes stop once they change delta by less than
                       # this fraction of the sweep's own change
PIECE_KEYS = 256       # keys of a stage solved together in a pass
CHUNK_ROWS = 32        # bank totals read per inner loop step


class ExitTables(NamedTuple):
  """Where each key of a stage keeps its exits (device arrays)."""
  offset: jax.Array  # [S, U, G] int32 first slot of the key's bank exits
                     #   (t = bank_min) in the flat buffer
  length: jax.Array  # [S, U, G] int32 bank exits kept, t_max(b) + 1 -
                     #   bank_min (0: a padding entry)


class Pieces(NamedTuple):
  """The keys of each stage in pieces of PIECE_KEYS, in stage order, for
  the correction's passes (device arrays; padding: the sink)."""
  keys: jax.Array       # [P, W] int32 padded-vector position of the key
  farkle: jax.Array     # [P, W] int32 position of its farkle target
  bank_base: jax.Array  # [P, W] int32 its bank position at t = 0
  offset: jax.Array     # [P, W] int32 its first exit slot (t = bank_min)
  length: jax.Array     # [P, W] int32 its bank exits, t = bank_min ..
                        #   t_max(b)
  stale: jax.Array      # [P, W] bool, the sweep read its farkle target's
                        #   previous value (a later stage)
  chunks: jax.Array     # [P] int32 row chunks of CHUNK_ROWS that cover it


class NewtonTables(NamedTuple):
  exits: ExitTables
  pieces: Pieces


def build(layout: StateLayout, keys: np.ndarray, farkle: np.ndarray,
          bank_base: np.ndarray, t_max: np.ndarray,
          solve_order: np.ndarray | None = None
          ) -> tuple[NewtonTables, int, int]:
  """Exit slots and correction pieces of the keys of an ordered sweep.

  Args:
    layout: the state layout.
    keys: [S, U, G] padded positions of each stage's keys (sink: padding).
    farkle, bank_base: [S, U, G] positions of their farkle targets and of
      their banks at t = 0.
    t_max: [S, U, G] the keys' last non-terminal turn total.
    solve_order: [padded size] when the sweep solves each position (a key
      reads the previous value of a farkle target solved after it); None:
      the stage order of `keys`. A sweep that solves a target together with
      the keys that farkle into it (the wavefront's finishing groups)
      reads it fresh.

  Returns:
    The tables, the size of the flat exit buffer and the loop steps of one
    pass of the correction.
  """
  real = keys < layout.sink
  if solve_order is None:
    solve_order = np.full(layout.padded_size, -1, np.int64)
    solve_order[keys[real]] = np.nonzero(real)[0]
  stale = real & (solve_order[farkle] > solve_order[keys])
  length = np.maximum(np.where(real, t_max + 1 - layout.bank_min, 0), 0)
  offset = np.zeros_like(length)
  offset.reshape(-1)[1:] = np.cumsum(length.reshape(-1))[:-1]
  size = int(length.sum())
  exits = ExitTables(placement.on_device(offset, np.int32),
                     placement.on_device(length, np.int32))
  pieces = _pieces(layout, real, keys, farkle, bank_base, offset, length,
                   stale)
  steps = int(np.maximum(pieces.chunks, 1).sum())
  return (NewtonTables(exits, Pieces(*map(placement.on_device, pieces))),
          size, steps)


def _pieces(layout, real, *columns) -> Pieces:
  """Cuts each stage's real keys (longest turns first) into pieces."""
  S = real.shape[0]
  rows = []
  for s in range(S):
    sel = real[s]
    cols = [c[s][sel] for c in columns]
    order = np.argsort(-cols[-2], kind="stable")  # by length
    cols = [c[order] for c in cols]
    for i in range(0, len(order), PIECE_KEYS):
      rows.append([c[i:i + PIECE_KEYS] for c in cols])
  pad = (layout.sink, layout.sink, layout.sink, 0, 0, False)
  out = []
  for j, fill in enumerate(pad):
    a = np.full((len(rows), PIECE_KEYS), fill,
                bool if j == 5 else np.int64)
    for p, r in enumerate(rows):
      a[p, :len(r[j])] = r[j]
    out.append(a if j == 5 else a.astype(np.int32))
  chunks = -(-out[4].max(axis=1) // CHUNK_ROWS)
  return Pieces(*out, chunks=chunks.astype(np.int32))


def buffer_bytes(layout: StateLayout) -> int:
  """Bytes of the exit buffer and per-key farkle exits of `layout`."""
  t = layout.t_max(np.arange(layout.num_scores)) + 1 - layout.bank_min
  per_b = layout.num_scores * layout.num_farkle ** 2
  return (int(np.maximum(t, 0).sum()) * per_b
          * np.dtype(EXIT_DTYPE).itemsize + 8 * layout.padded_size)


def store(buffer: jax.Array, bank: jax.Array, s: jax.Array,
          tables: ExitTables, bank_min: int) -> jax.Array:
  """Writes the bank exits [U, T + 1, G] of stage s into the buffer."""
  t = jnp.arange(bank.shape[1]) - bank_min
  keep = (t >= 0) & (t < tables.length[s][..., None])
  idx = jnp.where(keep, tables.offset[s][..., None] + t, buffer.shape[0])
  return buffer.at[idx].set(jnp.swapaxes(bank, 1, 2).astype(buffer.dtype),
                            mode="drop")


def _piece_pass(delta, buffer, farkle_exit, source, pieces: Pieces,
                layout: StateLayout):
  """One Gauss-Seidel pass of the correction over all pieces."""
  step = jnp.arange(CHUNK_ROWS)
  last = layout.num_rows  # bank totals past it are wins: delta 0 there

  def piece(p, delta):
    def chunk(c, acc):
      t = c * CHUNK_ROWS + step                           # [C] from bank_min
      keep = t[None] < pieces.length[p][:, None]          # [W, C]
      beta = buffer.at[jnp.where(keep, pieces.offset[p][:, None] + t,
                                 buffer.shape[0])].get(
                                     mode="fill", fill_value=0)
      reach = jnp.minimum(t + layout.bank_min, last) * layout.bank_stride
      ahead = delta[pieces.bank_base[p][:, None] + reach]
      return acc + (beta.astype(delta.dtype) * ahead).sum(axis=1)

    acc = jax.lax.fori_loop(0, pieces.chunks[p], chunk,
                            jnp.zeros(pieces.keys.shape[1], delta.dtype))
    keys = pieces.keys[p]
    d = -acc - farkle_exit[keys] * (delta[pieces.farkle[p]] + source[p])
    return delta.at[keys].set(d).at[-1].set(0)

  return jax.lax.fori_loop(0, pieces.keys.shape[0], piece, delta)


def correct(new: jax.Array, old: jax.Array, buffer: jax.Array,
            farkle_exit: jax.Array, pieces: Pieces, layout: StateLayout,
            relative: bool) -> tuple[jax.Array, jax.Array]:
  """The Newton step of a sweep: y + delta, clipped to [0, 1].

  Args:
    new: [V] the sweep's output y; old: [V] its input x.
    buffer: [N] bank exits; farkle_exit: [V] farkle exit per key position.
    pieces: the correction's pieces; layout: the state layout (static).
    relative: changes measured as |d| / y.

  Returns:
    The corrected vector and the Gauss-Seidel passes it took.
  """
  scale = (jnp.maximum(new, jnp.finfo(new.dtype).tiny) if relative
           else jnp.ones_like(new))[:-1]
  goal = INNER_SHRINK * (jnp.abs(new - old)[:-1] / scale).max()
  source = jnp.where(pieces.stale, (new - old)[pieces.farkle], 0.0)

  def one_pass(c):
    delta, passes, _ = c
    update = _piece_pass(delta, buffer, farkle_exit, source, pieces, layout)
    moved = (jnp.abs(update - delta)[:-1] / scale).max()
    return update, passes + 1, moved

  delta, passes, _ = jax.lax.while_loop(
      lambda c: (c[1] < INNER_PASSES) & (c[2] > goal), one_pass,
      (jnp.zeros_like(new), jnp.zeros((), jnp.int32),
       jnp.asarray(jnp.inf, new.dtype)))
  return jnp.clip(new + delta, 0, 1).at[-1].set(0), passes
