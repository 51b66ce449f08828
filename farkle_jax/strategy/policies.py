"""Strategies of the two-player game, as turn policies (docs/model.md §6.3).

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

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman
from farkle_jax.strategy import expected_score
from farkle_jax.strategy import memorized

PolicyFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclasses.dataclass(frozen=True)
class Strategy:
  """A named strategy.

  Attributes:
    name: label for reports.
    class_of_key: [K] int, the class of each flat start-of-turn key.
    class_b: [C] int, banked-score index shared by the keys of each class.
    policy: class ids [k] -> (prefer [k, T + 1, S] float64,
      bank [k, T + 1, S] bool).
    class_f: [C] int, the mover's farkle field of each class's keys, where
      it says whose hand the mover holds (`rules.hands`; None: any).
  """
  name: str
  class_of_key: np.ndarray
  class_b: np.ndarray
  policy: PolicyFn
  class_f: np.ndarray | None = None

  def start_states(self, layout: StateLayout, classes) -> np.ndarray:
    """[k] the dice state each class's turns start from."""
    f = 0 if self.class_f is None else self.class_f[classes]
    return np.broadcast_to(layout.start_state(f), np.shape(classes))


def layout_rows(layout: StateLayout, table: np.ndarray) -> np.ndarray:
  """Rows 0 .. T of a one-turn table [cap + 1, 6] (cap >= T)."""
  T = layout.num_rows
  if table.shape[0] < T + 1:
    raise ValueError(f"one-turn table has {table.shape[0]} rows, need {T + 1}")
  return table[:T + 1]


def _by_b(layout: StateLayout, name: str, prefer: np.ndarray,
          bank: np.ndarray) -> Strategy:
  """A strategy that ignores the scores (one class per banked score, and
  per mover's hand under `rules.hands`: a turn starts from that hand)."""
  b, _, f, _ = layout.key_fields()
  prefer, bank = layout_rows(layout, prefer), layout_rows(layout, bank)
  hands = len(layout.rules.hands) or 1

  def policy(classes):
    k = len(classes)
    return (np.broadcast_to(prefer, (k,) + prefer.shape),
            np.broadcast_to(bank, (k,) + bank.shape))

  classes = np.arange(layout.num_scores * hands)
  return Strategy(name, (b * hands + (f if hands > 1 else 0)).astype(np.int32),
                  (classes // hands).astype(np.int32), policy,
                  (classes % hands).astype(np.int32) if hands > 1 else None)


def optimal(w0: np.ndarray, layout: StateLayout,
            roll: roll_tables.RollTables) -> Strategy:
  """The win-maximizing strategy of a solved run (W0 [B, D, F, E]).

  Its turn values are rebuilt per batch of keys by one backward pass; it
  banks where banking is at least as good as rolling.
  """
  w0 = np.asarray(w0)
  fields_all = layout.key_fields()
  padded = layout.padded_start(w0)
  t = np.arange(layout.num_rows + 1)

  def policy(classes):
    values = bellman.turn_values(w0, classes, layout, roll)   # [T+1, S, k]
    values = np.moveaxis(values, -1, 0)                       # [k, T+1, S]
    fields = tuple(f[classes] for f in fields_all)
    bank_value = layout.bank_values(padded, fields, len(t))   # [k, T+1]
    floor = np.reshape(layout.bank_floor(fields[0]), (-1, 1))
    bank = ((t[None, :] >= floor)[..., None]
            & (bank_value[..., None] >= values))
    return values, bank

  keys = np.arange(layout.num_keys, dtype=np.int32)
  return Strategy("optimal", keys, fields_all[0].astype(np.int32), policy,
                  fields_all[2].astype(np.int32) if layout.rules.hands
                  else None)


def max_score(layout: StateLayout, sol: expected_score.TurnSolution,
              name: str = "max expected score") -> Strategy:
  """Maximum expected score play of every turn (scores ignored)."""
  return _by_b(layout, name, sol.expected, sol.bank)


def bank_at(layout: StateLayout, roll: roll_tables.RollTables,
            threshold: int) -> Strategy:
  """Bank exactly when the turn total is at least `threshold` points (or
  when banking wins); scorings maximize the mean points of that rule."""
  sol = expected_score.solve(layout.rules, roll, bank_at=threshold,
                             cap=max(2 * threshold,
                                     (layout.num_rows + 1) * layout.unit))
  return _by_b(layout, f"bank at {threshold}", sol.expected, sol.bank)


def play_memorized(layout: StateLayout,
                   table: memorized.MemorizedTable) -> Strategy:
  """Play by the memorized table (see `memorized`)."""
  prefer, bank = memorized.policy(table, layout.num_rows + 1)
  return _by_b(layout, "memorized table", prefer, bank)
