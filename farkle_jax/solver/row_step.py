"""One row of the turn pass, the one owner of its arithmetic (docs/model.md
§3), for NumPy and jax.numpy alike.

    roll(t, n) = P_farkle(n) * x_farkle
               + sum_r p(r) * max_j W(t + pts[r, j], next[r, j])
    W(t, n)    = max(roll(t, n), bank(t))   (bank 0 below the bank minimum)

Every function takes the array namespace `xp` (numpy or jax.numpy), as the
layout's index helpers do: the solver's jitted loop (`bellman.turn_pass`)
runs the row step with jax.numpy, and a query of a solved run runs it with
NumPy over the rows of one key (`turn_rows`), which needs no JAX at all, so
a query answers without importing or compiling anything. A query's
chance that a turn ends in a farkle (`turn_bust`) follows the options and
bank-or-roll decisions of this same row step, as does the distribution
of what the turn banks (`turn_points`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout, flat_turn


class OptionGroup(NamedTuple):
  """Score sets that offer the same number of options j."""
  rows: Any  # [R_j, j] int32, turn offset of each option's (pts, n')


class RollArrays(NamedTuple):
  """The roll tables as arrays of one namespace (independent of the keys):
  NumPy arrays, or device arrays for the solver."""
  groups: tuple[OptionGroup, ...]  # option gathers, grouped by option count
  set_weight: Any   # [S, R] probability of score set r for state n
  farkle_prob: Any  # [S]

  @property
  def dice_states(self) -> int:
    return self.farkle_prob.shape[0]


def roll_arrays(roll: roll_tables.RollTables, dtype=np.float64,
                xp: ModuleType = np) -> RollArrays:
  """The roll tables as arrays of `xp`, options grouped by count (each
  score set's distinct options once; sets in order of their count)."""
  pts, nxt = roll.opt_pts, roll.opt_next
  counts = np.array([len(set(zip(p, q))) for p, q in zip(pts, nxt)])
  order = np.argsort(counts, kind="stable")
  groups = []
  for j in sorted(set(counts)):
    sel = order[counts[order] == j]
    rows = np.zeros((len(sel), j), np.int32)
    for i, r in enumerate(sel):
      uniq = list(dict.fromkeys(zip(pts[r], nxt[r])))
      rows[i] = [flat_turn(p, q, roll.dice_states) for p, q in uniq]
    groups.append(OptionGroup(rows=xp.asarray(rows)))
  weight = np.zeros((roll.dice_states, len(order)))
  for col, r in enumerate(order):
    weight[roll.set_dice[r] - 1, col] = roll.set_prob[r]
  return RollArrays(groups=tuple(groups),
                    set_weight=xp.asarray(weight, dtype),
                    farkle_prob=xp.asarray(roll.farkle_prob, dtype))


def farkle_term(roll: RollArrays, x_farkle):
  """[S, k] what a farkle adds to rolling: P_farkle(n) * x_farkle of each
  key (x_farkle [k]: 1 - W0 of the opponent's next key)."""
  return roll.farkle_prob[:, None] * x_farkle[None]


def reached(t, roll: RollArrays, layout: StateLayout, xp: ModuleType
            ) -> list:
  """Per option group, [..., R_j, j] the flat offsets its options lead
  to from row(s) t (an int or a traced scalar; or [rows, 1, 1] for every
  row at once)."""
  return [layout.reached_offset(t, g.rows, xp) for g in roll.groups]


def bank_value(t, padded, bank_base, layout: StateLayout, xp: ModuleType):
  """[..., k] the value of banking t units for keys of `bank_base` (0
  below the bank minimum); t a row, or [rows, 1] for every row at once."""
  return xp.where(t >= layout.bank_floor_at(bank_base, xp), 1 - padded[
      layout.bank_position(bank_base, t, xp)], 0.0)


def row(flat, offsets: list, farkle, bank, roll: RollArrays,
        xp: ModuleType, picks: bool = False):
  """Row t of the turn pass of a batch of k keys.

  Args:
    flat: [(T + 1) * S, k] the rows (those above t already final).
    offsets: `reached` from row t.
    farkle: [S, k] `farkle_term` of the keys.
    bank: [k] `bank_value` of row t.
    roll: the roll tables, arrays of `xp`.
    xp: numpy or jax.numpy.
    picks: also say which option each score set takes.

  Returns:
    (rolling [S, k]: the value of rolling on; value [S, k]: the better of
    rolling and banking; with `picks` [R, k] int8 the first best option of
    each score set, in `roll.groups` order, else None).
  """
  best, pick = [], []
  for idx in offsets:
    top_j, pick_j = best_option(flat, idx, picks, xp)
    best.append(top_j)                              # [R_j, k]
    pick.append(pick_j)
  best = xp.concatenate(best, axis=0)               # [R, k]
  rolling = _weighted(roll.set_weight, best, xp) + farkle
  value = xp.maximum(rolling, bank[None, :])        # [S, k]
  return rolling, value, xp.concatenate(pick, axis=0) if picks else None


def _weighted(weight, best, xp: ModuleType):
  """[S, k] the score sets' best values weighed by their probabilities."""
  if xp is np:
    return np.dot(weight, best)
  # Full float precision on an accelerator too (no reduced-precision
  # matrix units).
  return xp.dot(weight, best, precision="highest")


def best_option(flat, idx, picks: bool, xp: ModuleType):
  """The best of each score set's options, and with `picks` which one.

  Args:
    flat: [(T + 1) * S, k] the rows; idx: [R_j, j] int32 option positions.
    picks: also return the first best option.
    xp: numpy or jax.numpy.

  Returns:
    [R_j, k] the best values and [R_j, k] int8 the first best option (None
    without `picks`).
  """
  # Under XLA an elementwise running maximum over the j columns: XLA's CPU
  # backend fuses the gathers into it. A max-reduce over the gathered
  # [R_j, j, k] block is instead written out and handed to a library
  # reduce kernel, 3x slower over a whole sweep (BENCHMARKS.md). With
  # picks, max and argmax of one block fuse into a single reduce with the
  # gather. NumPy runs each call on its own: one gather and one reduce are
  # the fewest calls.
  if picks or xp is np:
    got = flat[idx]                                # [R_j, j, k]
    return got.max(axis=1), (got.argmax(axis=1).astype(xp.int8) if picks
                             else None)
  best = flat[idx[:, 0]]
  for i in range(1, idx.shape[1]):
    best = xp.maximum(best, flat[idx[:, i]])
  return best, None


def turn_rows(x_farkle: np.ndarray, padded: np.ndarray,
              bank_base: np.ndarray, top: int, roll: RollArrays,
              layout: StateLayout) -> tuple[np.ndarray, np.ndarray]:
  """The backward pass over the turns of a few keys in NumPy, rows t =
  top .. 0 (`bellman.turn_pass` with `rolls`, without compiling).

  Args:
    x_farkle: [k] value of a farkle, 1 - W0 of the opponent's next key.
    padded: [layout.padded_size] padded start vector.
    bank_base: [k] int32 `layout.bank_base` of the keys.
    top: the highest row to compute (the largest `layout.t_max`).
    roll: the roll tables as NumPy arrays (`roll_arrays`).
    layout: the state layout.

  Returns:
    [T + 1, S, k] W(t, n), and [T + 1, S, k] the value of rolling on at
    each (t, n); rows above `top` are wins (1).
  """
  k = len(x_farkle)
  shape = (layout.num_rows + 1, layout.dice_states, k)
  values = np.ones(shape, padded.dtype)
  rolled = np.ones(shape, padded.dtype)
  # A view: each row written is what the rows below it read.
  flat = values.reshape(-1, k)
  farkle = farkle_term(roll, x_farkle)
  table, bank = _every_row(top, padded, bank_base, roll, layout)
  for t in range(top, -1, -1):
    rolled[t], values[t], _ = row(flat, [table[t]], farkle, bank[t], roll,
                                  np)
  return values, rolled


def _every_row(top: int, padded: np.ndarray, bank_base: np.ndarray,
               roll: RollArrays, layout: StateLayout
               ) -> tuple[np.ndarray, np.ndarray]:
  """[top + 1, R, J] every row's option offsets, the option groups as one
  table (`_one_table`), and [top + 1, k] every row's bank values: NumPy
  pays per call, not per element."""
  every = np.arange(top + 1)
  table = _one_table(reached(every[:, None, None], roll, layout, np))
  return table, bank_value(every[:, None], padded, bank_base, layout, np)


def _one_table(groups: list) -> np.ndarray:
  """[..., R, J] option groups [..., R_j, j] as one table, each set
  padded with its first option (which leaves its maximum and its first
  best option)."""
  width = max(g.shape[-1] for g in groups)
  return np.concatenate([np.concatenate(
      [g] + [g[..., :1]] * (width - g.shape[-1]), axis=-1) for g in groups],
                        axis=-2)


def turn_bust(values: np.ndarray, rolled: np.ndarray, padded: np.ndarray,
              bank_base: np.ndarray, top: int, roll: RollArrays,
              layout: StateLayout) -> tuple[np.ndarray, np.ndarray]:
  """The chance that the turn ends in a farkle under the policy of the
  turn pass, for the keys of `turn_rows` (its `values` and `rolled`).

  The policy is the pass's own: per score set the first best option of
  `best_option` over the same final values (so of options of equal W the
  one the pass takes, whatever their chances to farkle), and bank where
  banking is allowed and bank >= roll (the solver's tie rule):

      rolling(t, n) = P_farkle(n) + sum_r p(r) bust(option taken of r)
      bust(t, n)    = 0 where banking is taken or t is a win, else rolling

  Args:
    values, rolled: [T + 1, S, k] `turn_rows` of the keys.
    padded, bank_base, top, roll, layout: as `turn_rows` took them.

  Returns:
    [T + 1, S, k] bust(t, n), and [T + 1, S, k] the chance of rolling on
    at each (t, n) and playing on so; rows above `top` are wins (0).
  """
  k = values.shape[-1]
  flat = values.reshape(-1, k)
  bust = np.zeros(values.shape, values.dtype)
  on = np.zeros(values.shape, values.dtype)
  bust_flat = bust.reshape(-1, k)   # a view, as in `turn_rows`
  table, bank = _every_row(top, padded, bank_base, roll, layout)
  may_bank = np.arange(top + 1)[:, None] >= layout.bank_floor_at(
      bank_base, np)                                  # [rows, k]
  sets, keys = np.arange(table.shape[1])[:, None], np.arange(k)[None]
  for t in range(top, -1, -1):
    _, pick = best_option(flat, table[t], True, np)   # [R, k]
    taken = bust_flat[table[t][sets, pick], keys]     # [R, k]
    on[t] = roll.farkle_prob[:, None] + np.dot(roll.set_weight, taken)
    banks = may_bank[t][None] & (bank[t][None] >= rolled[t])
    bust[t] = np.where(banks, 0.0, on[t])
  return bust, on


def turn_points(values: np.ndarray, rolled: np.ndarray, padded: np.ndarray,
                bank_base: np.ndarray, top: int, roll: RollArrays,
                layout: StateLayout, start: int) -> tuple[np.ndarray, float]:
  """The distribution of what one turn of a key banks under the policy of
  the turn pass (the options and decisions `turn_bust` follows), by one
  forward pass of probability over its in-turn states from (0, `start`).

  Args:
    values, rolled: [T + 1, S, 1] `turn_rows` of one key.
    padded, bank_base, top, roll, layout: as `turn_rows` took them.
    start: the dice state (1..S) the turn starts from.

  Returns:
    [top + 1 + P] P(the turn banks t units), t = index (a total past `top`
    ends the turn at once; where several options of a roll get there, the
    first is taken, as the pass takes it among equal values), and P(the
    turn ends in a farkle).
  """
  S = layout.dice_states
  flat = values.reshape(-1, 1)
  table, bank = _every_row(top, padded, bank_base, roll, layout)
  # The same options unclamped: past `top` each lands on its own total.
  options = _one_table([np.asarray(g.rows) for g in roll.groups])  # [R, J]
  gain = layout.row_of(options)
  after = options - layout.turn_offset(gain, 1)          # n - 1
  sets = np.arange(len(options))
  mass = np.zeros((top + 1, S))
  mass[0, start - 1] = 1.0
  banked = np.zeros(top + 2 + int(gain.max()))
  farkle = 0.0
  floor = np.asarray(layout.bank_floor_at(bank_base, np)).reshape(-1)[0]
  for t in range(top + 1):
    _, pick = best_option(flat, table[t], True, np)          # [R, 1]
    banks = (t >= floor) & (bank[t, 0] >= rolled[t, :, 0])   # [S]
    banked[t] += mass[t] @ banks
    go = np.where(banks, 0.0, mass[t])
    farkle += float(go @ roll.farkle_prob)
    flow = go @ roll.set_weight                              # [R]
    to_t = t + gain[sets, pick[:, 0]]
    to_n = after[sets, pick[:, 0]]
    wins = to_t > top
    np.add.at(banked, to_t[wins], flow[wins])
    np.add.at(mass, (to_t[~wins], to_n[~wins]), flow[~wins])
  return banked, farkle
