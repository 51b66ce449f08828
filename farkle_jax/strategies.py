"""Strategies of the two-player game, as turn policies over the state layout.

A strategy decides, in every in-turn state (b, d, f, e, t, n), whether to
bank and, after a roll, which scoring to take. Here it is given per *class*
of start-of-turn keys (keys of one class play the same turn and share the
banked score b):

  prefer[c, t, n]  preference for reaching turn state (t, n): after a roll
                   the option whose reached state has the highest preference
                   is taken (the first of them on ties);
  bank[c, t, n]    bank at (t, n) when banking is allowed.

Every strategy banks as soon as banking wins and takes a scoring that wins
when one exists (the evaluator and the simulator apply that rule, so
`prefer` and `bank` only matter short of winning). Rows t = 0 .. T follow the
layout (row T and everything above t_max(b) are wins).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from farkle_jax import bellman
from farkle_jax import expected_score
from farkle_jax import memorable
from farkle_jax import tables as tables_lib
from farkle_jax.layout import N_DICE, StateLayout

PolicyFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclasses.dataclass(frozen=True)
class Strategy:
  """A named strategy.

  Attributes:
    name: label for reports.
    class_of_key: [K] int, the class of each flat start-of-turn key.
    class_b: [C] int, banked-score index shared by the keys of each class.
    policy: class ids [k] -> (prefer [k, T + 1, 6] float64,
      bank [k, T + 1, 6] bool).
  """
  name: str
  class_of_key: np.ndarray
  class_b: np.ndarray
  policy: PolicyFn


def _rows(layout: StateLayout, table: np.ndarray) -> np.ndarray:
  """Rows 0 .. T of a one-turn table [cap + 1, 6] (cap >= T)."""
  T = layout.num_rows
  if table.shape[0] < T + 1:
    raise ValueError(f"one-turn table has {table.shape[0]} rows, need {T + 1}")
  return table[:T + 1]


def _by_b(layout: StateLayout, name: str, prefer: np.ndarray,
          bank: np.ndarray) -> Strategy:
  """A strategy that ignores the scores (one class per banked score)."""
  b = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)[0]
  prefer, bank = _rows(layout, prefer), _rows(layout, bank)

  def policy(classes):
    k = len(classes)
    return (np.broadcast_to(prefer, (k,) + prefer.shape),
            np.broadcast_to(bank, (k,) + bank.shape))

  return Strategy(name, b.astype(np.int32),
                  np.arange(layout.num_scores, dtype=np.int32), policy)


def optimal(w0: np.ndarray, layout: StateLayout,
            roll: tables_lib.RollTables) -> Strategy:
  """The win-maximizing strategy of a solved run (W0 [B, D, F, E]).

  Its turn values are rebuilt per batch of keys by one backward pass; it
  banks where banking is at least as good as rolling.
  """
  w0 = np.asarray(w0)
  fields_all = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)
  padded = layout.padded_start(w0)
  t = np.arange(layout.num_rows + 1)

  def policy(classes):
    values = bellman.turn_values(w0, classes, layout, roll)   # [T+1, 6, k]
    values = np.moveaxis(values, -1, 0)                       # [k, T+1, 6]
    fields = tuple(f[classes] for f in fields_all)
    bank_value = layout.bank_values(padded, fields, len(t))   # [k, T+1]
    bank = ((t[None, :] >= layout.bank_min)[..., None]
            & (bank_value[..., None] >= values))
    return values, bank

  keys = np.arange(layout.num_keys, dtype=np.int32)
  return Strategy("optimal", keys, fields_all[0].astype(np.int32), policy)


def max_score(layout: StateLayout, sol: expected_score.TurnSolution,
              name: str = "max expected score") -> Strategy:
  """Maximum expected score play of every turn (scores ignored)."""
  return _by_b(layout, name, sol.expected, sol.bank)


def bank_at(layout: StateLayout, roll: tables_lib.RollTables,
            threshold: int) -> Strategy:
  """Bank exactly when the turn total is at least `threshold` points (or
  when banking wins); scorings maximize the mean points of that rule."""
  sol = expected_score.solve(layout.rules, roll, bank_at=threshold,
                             cap=max(2 * threshold,
                                     (layout.num_rows + 1) * layout.unit))
  return _by_b(layout, f"bank at {threshold}", sol.expected, sol.bank)


def memorized(layout: StateLayout, table: memorable.Breakpoints) -> Strategy:
  """The human-memorizable breakpoint table (see `memorable`)."""
  prefer, bank = memorable.policy(table, layout.num_rows + 1)
  return _by_b(layout, "memorized table", prefer, bank)


def go_masks(layout: StateLayout, b_min: tuple[int, ...],
             d_min: tuple[int, ...]) -> np.ndarray:
  """[K] 6-bit masks: bit n - 1 set where, with n dice left, the player
  never banks short of winning (own score >= b_min[n-1] or the opponent's
  >= d_min[n-1], points)."""
  b, d = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)[:2]
  b = (b + layout.low) * layout.unit
  d = (d + layout.low) * layout.unit
  mask = np.zeros(layout.num_keys, np.int32)
  for n in range(1, N_DICE + 1):
    go = (b >= b_min[n - 1]) | (d >= d_min[n - 1])
    mask |= go.astype(np.int32) << (n - 1)
  return mask


def go_for_it(layout: StateLayout, sol: expected_score.TurnSolution,
              b_min: tuple[int, ...], d_min: tuple[int, ...]) -> Strategy:
  """Maximum expected score play, except that with n dice left it never
  banks short of winning when b >= b_min[n-1] or d >= d_min[n-1]."""
  b = np.unravel_index(np.arange(layout.num_keys), layout.key_shape)[0]
  classes = b * 64 + go_masks(layout, b_min, d_min)
  return go_for_it_classes(layout, sol, classes.astype(np.int32),
                           f"go for it B={tuple(b_min)} D={tuple(d_min)}")


def go_for_it_classes(layout: StateLayout, sol: expected_score.TurnSolution,
                      class_of_key: np.ndarray, name: str) -> Strategy:
  """Go-for-it strategy with classes b * 64 + mask (any masks)."""
  prefer, bank = _rows(layout, sol.expected), _rows(layout, sol.bank)
  bits = (np.arange(64)[:, None] >> np.arange(N_DICE)[None, :]) & 1

  def policy(classes):
    go = bits[np.asarray(classes) % 64].astype(bool)      # [k, 6]
    k = len(classes)
    return (np.broadcast_to(prefer, (k,) + prefer.shape),
            bank[None] & ~go[:, None, :])

  class_b = np.repeat(np.arange(layout.num_scores, dtype=np.int32), 64)
  return Strategy(name, class_of_key, class_b, policy)
