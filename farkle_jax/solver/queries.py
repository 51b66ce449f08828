"""Queries of a solved run: turn tables of any start-of-turn state
(docs/model.md §2-§3).

A turn table lists, for one start-of-turn state (b, d, f, e), the win
probability and the optimal action (bank or roll) of every in-turn state
(t, n), and which of them no sequence of rolls can reach from the start of
the turn (t = 0, the whole hand: n = 6 for six dice alike). Its
values are rebuilt from the converged start-of-turn values W0 by one backward
pass over the turn, in NumPy (`Turns`, the solver's row arithmetic of
`row_step`): a query imports no JAX and compiles nothing.
"""

from __future__ import annotations

import collections
import json
from typing import Any, NamedTuple

import numpy as np

from farkle_jax.game import dice, roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import row_step


class TurnRows(NamedTuple):
  """The in-turn values of one start-of-turn key."""
  value: np.ndarray  # [T + 1, S] W(t, n), the better of banking and rolling
  roll: np.ndarray   # [T + 1, S] the value of rolling at (t, n)


class BustRows(NamedTuple):
  """The chance that a turn of one key ends in a farkle, playing on as
  the values say (`row_step.turn_bust`: the options and the bank-or-roll
  decisions of the turn pass, banking on ties)."""
  bust: np.ndarray   # [T + 1, S] from (t, n): 0 where banking is taken
  roll: np.ndarray   # [T + 1, S] from (t, n) when rolling on


class Turns:
  """Turn values of single keys of a solved run, in milliseconds each.

  The padded start vector and the roll tables are built once; each key is
  then one backward pass over its turn in NumPy (`row_step.turn_rows`, the
  solver's own row arithmetic: no JAX, nothing to compile), and the last
  `cache` keys asked for are kept (their chances to farkle, `busts`, a
  second pass asked for alone, too).
  """

  def __init__(self, w0: np.ndarray, layout: StateLayout,
               roll: roll_tables.RollTables, cache: int = 512):
    self.w0 = np.asarray(w0)                          # [B, D, F, E]
    self.layout = layout
    self.padded = layout.padded_start(self.w0)        # [padded_size]
    self._flat = self.w0.reshape(-1)
    self._roll = row_step.roll_arrays(roll, self.w0.dtype)
    self._cache: collections.OrderedDict[int, TurnRows] = (
        collections.OrderedDict())
    self._busts: collections.OrderedDict[int, BustRows] = (
        collections.OrderedDict())
    self._size = cache

  def of(self, key: int) -> TurnRows:
    """The turn values of flat key `key` (from `layout.key_index`)."""
    key = int(key)
    if key in self._cache:
      self._cache.move_to_end(key)
      return self._cache[key]
    layout = self.layout
    fields = layout.key_fields(np.array([key]))
    value, rolled = row_step.turn_rows(
        1 - self._flat[layout.farkle_index(fields)], self.padded,
        layout.bank_base(fields), int(layout.t_max(fields[0][0])),
        self._roll, layout)
    rows = TurnRows(value[:, :, 0], rolled[:, :, 0])
    _keep(self._cache, key, rows, self._size)
    return rows

  def busts(self, key: int) -> BustRows:
    """The chances to end the turn of flat key `key` in a farkle."""
    key = int(key)
    if key in self._busts:
      self._busts.move_to_end(key)
      return self._busts[key]
    layout, rows = self.layout, self.of(key)
    fields = layout.key_fields(np.array([key]))
    bust, rolling = row_step.turn_bust(
        rows.value[:, :, None], rows.roll[:, :, None], self.padded,
        layout.bank_base(fields), int(layout.t_max(fields[0][0])),
        self._roll, layout)
    out = BustRows(bust[:, :, 0], rolling[:, :, 0])
    _keep(self._busts, key, out, self._size)
    return out

  def points(self, key: int) -> tuple[np.ndarray, float]:
    """What a turn of flat key `key` banks, played as the values say:
    [top + 1 + P] P(banking t units), t = index (a total past the key's
    t_max ends the turn at once), and P(the turn ends in a farkle)
    (`row_step.turn_points`)."""
    layout, rows = self.layout, self.of(key)
    fields = layout.key_fields(np.array([int(key)]))
    return row_step.turn_points(
        rows.value[:, :, None], rows.roll[:, :, None], self.padded,
        layout.bank_base(fields), int(layout.t_max(fields[0][0])),
        self._roll, layout, int(layout.start_state(fields[2][0])))


def _keep(cache: collections.OrderedDict, key: int, rows, size: int):
  """Keeps `rows` as the newest of at most `size` entries."""
  cache[key] = rows
  if len(cache) > size:
    cache.popitem(last=False)


def reachable(layout: StateLayout, roll: roll_tables.RollTables,
              b_index: int, f: int = 0) -> np.ndarray:
  """[T, S] bool: in-turn states (t, n) that some rolls reach from the
  start of a turn of key (b_index, ., f, .): t = 0, the mover's whole hand.

  The player banks as soon as banking wins, so nothing continues from a
  terminal state.
  """
  top = int(layout.t_max(b_index))
  reach = np.zeros((layout.num_rows, layout.dice_states), bool)
  reach[:top + 1] = roll_tables.reachable(roll, top + 1,
                                          int(layout.start_state(f)))
  return reach


def _check(layout: StateLayout, f: int, e: int, t_max: int | None) -> None:
  """ValueError unless f, e are farkle counts and t_max a turn total."""
  for name, v in (("f", f), ("e", e)):
    if not 0 <= v < layout.num_farkle:
      raise ValueError(f"{name}={v} is not a farkle count of these rules: "
                       f"allowed are 0..{layout.num_farkle - 1}")
  if t_max is not None and (t_max < 0 or t_max % layout.unit):
    raise ValueError(f"t_max={t_max}: expected a turn total >= 0, a "
                     f"multiple of {layout.unit}")


def turn_table(w0: np.ndarray, layout: StateLayout,
               roll: roll_tables.RollTables, b: int, d: int, f: int, e: int,
               t_max: int | None = None, turns: Turns | None = None
               ) -> dict[str, Any]:
  """The turn table of start-of-turn state (b, d, f, e).

  Args:
    w0: [B, D, F, E] converged start-of-turn values.
    layout: the run's state layout.
    roll: the rules' roll tables.
    b, d: banked scores in points; f, e: farkle counts.
    t_max: last turn total (points) to list; default: the first total at
      which every dice count banks (or the last non-terminal total).
    turns: the `Turns` of these values to ask (default: built here).

  Returns:
    {"b", "d", "f", "e", "columns", "rows": [{"t", "W": {"6": ...},
    "action": {...}, "unreachable": [...]}, ...]}: "columns" the dice
    states from the whole hand down, as `layout.dice_labels` names them
    ("6".."1" for dice alike), the keys of "W" and "action";
    "unreachable" the states (n) no rolls reach.
  """
  bi, di = layout.index_of(b, "b"), layout.index_of(d, "d")
  _check(layout, f, e, t_max)
  turns = Turns(w0, layout, roll, cache=1) if turns is None else turns
  values = turns.of(layout.key_index(bi, di, f, e)).value
  top = int(layout.t_max(bi))
  reach = reachable(layout, roll, bi, f)
  columns = list(reversed(layout.hand_states(f)))
  bank_values = layout.bank_values(
      turns.padded, tuple(np.array([x]) for x in (bi, di, f, e)),
      top + 1)[0]
  unit = layout.unit
  rows = []
  for t in range(top + 1):
    bank = bank_values[t] if t >= layout.bank_floor(bi) else None
    row = {"t": t * unit, "W": {}, "action": {}, "unreachable": []}
    for n in columns:
      w, name = float(values[t, n - 1]), layout.dice_labels[n - 1]
      row["W"][name] = w
      row["action"][name] = ("bank" if bank is not None and w == bank
                             else "roll")
      if not reach[t, n - 1]:
        row["unreachable"].append(n)
    rows.append(row)
    all_bank = all(a == "bank" for a in row["action"].values())
    if t_max is None and all_bank:
      break
    if t_max is not None and t * unit >= t_max:
      break
  out = {"b": b, "d": d, "f": f, "e": e,
         "position": layout.key_words(b, d, f, e),
         "columns": [layout.dice_labels[n - 1] for n in columns],
         "states": columns, "rows": rows}
  if not layout.rules.dice_alike:
    out["dice"] = dice.legend(layout.rules.hand_specs[
        f if layout.rules.hands else 0])
  return out


def format_table(table: dict[str, Any]) -> str:
  """The turn table as text: W per n, 'B' after a value where banking is best,
  '-' for an unreachable state."""
  cols = table.get("columns", [str(n) for n in range(6, 0, -1)])
  state = dict(zip(cols, table.get("states", range(len(cols), 0, -1))))
  where = table.get("position") or (
      f"b={table['b']} d={table['d']} f={table['f']} e={table['e']}")
  head = (f"turn table {where}  (W = win probability of the player to "
          "move; B = bank, otherwise roll; - = unreachable)")
  if "dice" in table:
    head += f"\ndice left, by letter: {table['dice']}"
  lines = [head, f"{'t':>6} " + " ".join(f"{'n=' + c:>10}" for c in cols)]
  for row in table["rows"]:
    cells = []
    for c in cols:
      if state[c] in row["unreachable"]:
        cells.append(f"{'-':>10}")
      else:
        mark = "B" if row["action"][c] == "bank" else " "
        cells.append(f"{row['W'][c]:9.6f}{mark}")
    lines.append(f"{row['t']:>6} " + " ".join(cells))
  return "\n".join(lines)


def to_json(table: dict[str, Any]) -> str:
  return json.dumps(table, indent=1)
