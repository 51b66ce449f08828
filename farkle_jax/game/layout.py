"""The state layout: the one owner of the state's index arithmetic.

A game state is s = (t, n, b, d, f, e) (docs/model.md §2). Every number that
says where a state lives is computed here and nowhere else:

* banked scores as indices from the floor in score units (`index_of`,
  `points`), B = D of them;
* the start-of-turn *key* (b, d, f, e), numbered
  k = ((b*D + d)*F + f)*E + e (`key_index`, `key_fields`);
* the in-turn state (t, n): a row t (turn total in units) and a column
  n - 1 for the dice state n = 1..S (`game.dice`: S = 6 and n dice for six
  dice alike; the whole hand is n = S), flat offset t*S + n - 1
  (`turn_offset`); rows above `t_max(b)` are wins, and row T = `num_rows`
  stands for all of them;
* the transitions that leave a turn: the opponent's key after a farkle
  (`farkle_fields`) and after banking t (`bank_base` + t * `bank_stride`);
* the *padded start vector*: W0[b, d, f, e] with `bank_padding` zero columns
  on the d axis (banks that win read a zero) and one trailing zero slot, a
  sink for the padding entries of batched kernels (`padded_start`,
  `padded_index`, `unpad`);
* the full value array of value iteration, [C, T + 1, S, Kc]: keys cut into
  C chunks of Kc, the last padded with key 0 (`chunk_fields`,
  `start_values`, `terminal_mask`).

Functions that kernels call inside `jit` take `xp` (numpy or jax.numpy); the
layout itself is a frozen dataclass, hashable, so it can be a static argument.
"""

from __future__ import annotations

import dataclasses
import math
from types import ModuleType

import numpy as np

from farkle_jax.game import dice, final_round
from farkle_jax.game.rules import Rules

N_DICE = 6   # dice in a hand


def flat_turn(t, n, states: int):
  """Flat offset of in-turn state (t, n) in a [rows, S] turn array, S =
  `states` (`ScoreUnits.turn_offset` where a layout is at hand)."""
  return t * states + n - 1


def turn_row(offset, states: int):
  """Turn total (row) of a flat turn offset."""
  return offset // states

Fields = tuple  # (b, d, f, e): index arrays (or ints) of the same shape


class ScoreUnits:
  """The rule sizes in score units, and where an option lands in a turn
  array, shared by the two-player layout and the N-player one
  (`game.seats`): sizes, the turn rows of a banked score, the bank floor,
  the scores of players off the board (docs/model.md §1). Needs `rules`,
  `num_scores` and `key_shape` of the layout."""

  @property
  def unit(self) -> int:
    return self.rules.step

  @property
  def low(self) -> int:
    return self.rules.low // self.unit

  @property
  def goal(self) -> int:
    return self.rules.goal // self.unit

  @property
  def bank_min(self) -> int:
    return max(1, self.rules.bank_minimum // self.unit)

  @property
  def penalty(self) -> int:
    return self.rules.penalty // self.unit

  @property
  def entry(self) -> int:
    """The entry minimum in units (0: none)."""
    return self.rules.entry_minimum // self.unit

  @property
  def num_farkle(self) -> int:
    return self.rules.farkle_states

  @property
  def dice_states(self) -> int:
    """S: the dice states of a turn (6 for six dice alike, `game.dice`),
    those of every hand in play one after the other."""
    return len(dice.table_states(self.rules.hand_specs))

  @property
  def dice_labels(self) -> tuple[str, ...]:
    """[S] the dice states as the tables name them (`dice.table_labels`)."""
    return dice.table_labels(self.rules.hand_specs)

  def start_state(self, f, xp: ModuleType = np):
    """The dice state (1..S) a turn starts from, the mover's whole hand:
    S with one hand for all; under `rules.hands`, by the mover's farkle
    field f, which holds their hand."""
    if not self.rules.hands:
      return self.dice_states + 0 * f
    return xp.asarray(dice.starts(self.rules.hand_specs), np.int32)[f]

  def own_states(self, f, xp: ModuleType = np):
    """The dice states of the mover's hand, per key's farkle field f (all
    S with one hand for all): what a key's turn is made of."""
    if not self.rules.hands:
      return self.dice_states + 0 * f
    sizes = np.diff((0,) + dice.starts(self.rules.hand_specs))
    return xp.asarray(sizes, np.int32)[f]

  def hand_states(self, f: int) -> range:
    """The dice states (1..S) of the hand of farkle field f."""
    if not self.rules.hands:
      return range(1, self.dice_states + 1)
    ends = (0,) + dice.starts(self.rules.hand_specs)
    return range(ends[f] + 1, ends[f + 1] + 1)

  def turn_offset(self, t, n):
    """Flat offset of in-turn state (t, n) in a [rows, S] turn array."""
    return flat_turn(t, n, self.dice_states)

  def row_of(self, offset):
    """Turn total (row) of a flat turn offset."""
    return turn_row(offset, self.dice_states)

  @property
  def num_keys(self) -> int:
    return math.prod(self.key_shape)   # exact, however large

  @property
  def num_off(self) -> int:
    """K: banked-score indices of players not on the board yet, kept apart
    only with both an entry minimum and a penalty (docs/model.md §1)."""
    return len(self.off_scores)

  @property
  def off_scores(self) -> tuple[int, ...]:
    """Scores (units, ascending) a player not on the board can have: 0, and
    what penalties leave of it down to the floor."""
    if not (self.entry and self.penalty):
      return ()
    return tuple(sorted({max(self.low, -k * self.penalty)
                         for k in range(-self.low // self.penalty + 2)}))

  def score_units(self, b, xp: ModuleType = np):
    """Banked score (units) of banked-score index b."""
    k = self.num_off
    if not k:
      return b + self.low
    off = xp.asarray(self.off_scores, np.int32)
    return xp.where(b < k, off[xp.minimum(b, k - 1)], b - k + self.low)

  def on_board(self, b, xp: ModuleType = np):
    """The index b stands for once its player is on the board."""
    if not self.num_off:
      return b
    return self.score_units(b, xp) - self.low + self.num_off

  def index_of(self, score: int, field: str = "score",
               on_board: bool | None = None) -> int:
    """Banked-score index of `score` points; ValueError if out of range.

    With an entry minimum and a penalty (`num_off`), `on_board` says
    whether the player has banked yet; by default a score of 0 is not on
    the board and any other is. Otherwise a score of 0 says it alone.
    """
    if on_board is None:
      on_board = score != 0
    if score % self.unit or not self.rules.low <= score < self.rules.goal:
      raise ValueError(
          f"{field}={score} is not a banked score of these rules: allowed are "
          f"multiples of {self.unit} from {self.rules.low} to "
          f"{self.rules.goal - self.unit}")
    if not on_board and self.num_off:
      if score // self.unit not in self.off_scores:
        raise ValueError(
            f"{field}={score} off the board: allowed are "
            f"{[x * self.unit for x in self.off_scores]}")
      return self.off_scores.index(score // self.unit)
    return score // self.unit - self.low + self.num_off

  # Keys.
  def penalized(self, b, xp: ModuleType = np):
    """Banked-score index of b after the farkle penalty: P units lower,
    not below the floor; off the board (`num_off`) the next score of the
    list, whose scores below 0 are one index apart."""
    k = self.num_off
    lower = xp.maximum(k, b - self.penalty)
    return xp.where(b < k, xp.maximum(0, b - 1), lower) if k else lower

  def points(self, index):
    """Banked score in points of banked-score index (inverse of index_of)."""
    return self.score_units(index) * self.unit

  @property
  def past_goal(self) -> int:
    """Units past the goal a turn total is followed: the final-round cap
    (`rules.final_round_cap`); 0 without a final round, where reaching the
    goal wins at once."""
    if not self.rules.final_round:
      return 0
    return self.rules.final_round_cap // self.unit

  def t_max(self, b, xp: ModuleType = np):
    """Largest non-terminal turn total (units) for banked-score index b."""
    return xp.maximum(self.bank_floor(b, xp) - 1,
                      self.goal - 1 - self.score_units(b, xp) + self.past_goal)

  @property
  def num_rows(self) -> int:
    """T: turn-total rows (the largest t_max + 1); row T holds the wins."""
    return int(self.t_max(0)) + 1

  @property
  def num_states(self) -> int:
    """Non-terminal model states (t <= t_max of the mover's score), times
    the other key fields and the dice to roll (docs/model.md §2)."""
    rows = self.t_max(np.arange(self.num_scores)) + 1
    # Under `hands` a key's turn has its own hand's states only.
    hands = len(self.rules.hands) or 1
    return (int(rows.sum()) * (self.num_keys // self.num_scores // hands)
            * self.dice_states)

  def bank_floor(self, b, xp: ModuleType = np):
    """Smallest bankable turn total (units) for banked-score index b.

    Under an entry minimum (rules without a penalty) a banked score of 0 is
    exactly "not on the board yet": every first bank is at least the entry
    minimum and no score ever falls, so such a player must bank at least
    the entry minimum; everyone else the bank minimum. With a penalty too,
    the players off the board have indices of their own (`num_off`).
    """
    if not self.entry:
      return self.bank_min
    off = b < self.num_off if self.num_off else b + self.low == 0
    return xp.where(off, max(self.bank_min, self.entry), self.bank_min)

  def reached_offset(self, t, options, xp: ModuleType = np):
    """Flat offsets of the states that options lead to from row t.

    Args:
      t: turn total (units) before the roll.
      options: `turn_offset(points, next dice)` of each option.

    Returns:
      `options + turn_offset(t, 1)`, clamped to the row of wins T (every
      state past it is a win too).
    """
    S = self.dice_states
    return xp.minimum(options + t * S, self.num_rows * S + options % S)



@dataclasses.dataclass(frozen=True)
class StateLayout(ScoreUnits):
  """Sizes and index arithmetic of the state of one rule set.

  Attributes:
    rules: the rule set.
    chunk_keys: keys per chunk (Kc) of the full value array.
  """
  rules: Rules
  chunk_keys: int = 2048

  @property
  def num_scores(self) -> int:
    """B = D: the K scores off the board, then on it from the floor to
    goal - step."""
    return self.num_off + self.goal - self.low

  @property
  def key_shape(self) -> tuple[int, int, int, int]:
    return (self.num_scores, self.num_scores, self.num_farkle, self.num_farkle)

  def bank_floor_at(self, base, xp: ModuleType = np):
    """`bank_floor` of the banker of keys whose `bank_base` is `base`."""
    if not self.entry:
      return self.bank_min
    if self.num_off:   # a banker off the board has a negative base
      return xp.where(base < 0, max(self.bank_min, self.entry),
                      self.bank_min)
    return self.bank_floor((base // self.bank_stride) % self.padded_width, xp)

  def bank_position(self, base, t, xp: ModuleType = np):
    """Padded-vector position of banking t units from keys of `bank_base`
    `base` (a banker off the board has it as -1 - position)."""
    if self.num_off:
      base = xp.where(base < 0, -1 - base, base)
    return base + t * self.bank_stride

  def key_index(self, b, d, f, e):
    """Flat key of banked-score indices b, d and farkle counts f, e."""
    _, D, F, E = self.key_shape
    return ((b * D + d) * F + f) * E + e

  def key_fields(self, keys=None) -> Fields:
    """(b, d, f, e) of flat keys (default: every key 0 .. K - 1)."""
    keys = np.arange(self.num_keys) if keys is None else np.asarray(keys)
    return np.unravel_index(keys, self.key_shape)

  def key_words(self, b: int, d: int, f: int, e: int) -> str:
    """A start of turn as people read it: the banked scores and the
    farkle counts, or under rules.hands the hands, numbered from 1 (as the
    tables and `--hands` number them)."""
    if self.rules.hands:
      return f"b={b} d={d} hands {f + 1} v {e + 1}"
    return f"b={b} d={d} f={f} e={e}"

  def opening_key(self, first: int = 0, second: int = 0) -> tuple[int, ...]:
    """Key (as a W0 index) of a game's first turn from banked scores
    `first`, `second` (points) and no farkles (under `rules.hands`: player
    1, with hand 1, to move)."""
    hands = (0, 1) if self.rules.hands else (0, 0)
    return (self.index_of(first, "start"), self.index_of(second, "start"),
            *hands)

  # Transitions that end a turn.
  def farkle_fields(self, fields: Fields, xp: ModuleType = np) -> Fields:
    """The opponent's key after a farkle from key `fields`."""
    b, d, f, e = fields
    if self.rules.hands:   # f and e are the hands: they change places
      return d, b, e, f
    if self.penalty > 0:
      b = xp.where(f == self.num_farkle - 1, self.penalized(b, xp), b)
    return d, b, e, (f + 1) % self.num_farkle

  def farkle_index(self, fields: Fields | None = None) -> np.ndarray:
    """Flat key the opponent starts from after a farkle (default: every
    padded key of `chunk_fields`)."""
    fields = self.chunk_fields() if fields is None else fields
    return np.asarray(self.key_index(*self.farkle_fields(fields)), np.int32)

  def after_bank(self, fields: Fields, t, xp: ModuleType = np) -> Fields:
    """The opponent's key after banking t units from key `fields` (its d
    index may lie past the last score: the bank won)."""
    b, d, f, e = fields
    return d, self.on_board(b, xp) + t, e, f if self.rules.hands else 0

  # The padded start vector.
  @property
  def bank_padding(self) -> int:
    """Zero columns appended to W0's d axis for banks that reach the goal."""
    return self.num_rows + 1

  @property
  def padded_width(self) -> int:
    return self.num_scores + self.bank_padding

  @property
  def padded_size(self) -> int:
    """Length of the padded start vector, its trailing sink slot included."""
    B, _, F, E = self.key_shape
    return B * self.padded_width * F * E + 1

  @property
  def sink(self) -> int:
    """Position of the trailing zero slot of the padded start vector."""
    return self.padded_size - 1

  @property
  def bank_stride(self) -> int:
    """Distance in the padded vector between banking t and t + 1."""
    return self.num_farkle ** 2

  def padded_index(self, b, d, f, e):
    """Position of key (b, d, f, e) in the padded start vector."""
    F = self.num_farkle
    return ((b * self.padded_width + d) * F + f) * F + e

  def raised_key(self, position, total, xp: ModuleType = np):
    """Padded position of the key of index sum `total` nearest the key at
    padded `position` (of a lower sum): its second score raised first, as
    far as the last score, then its first; its farkle counts kept. For a
    penalty farkle's target not solved yet, the nearest key (by index)
    that is. `total` lies between the key's own sum and the highest,
    2 (num_scores - 1); elsewhere the position is not a key's."""
    counts = self.num_farkle ** 2
    lead = self.padded_width * counts
    d = xp.minimum(self.num_scores - 1, total - position // lead)
    return (total - d) * lead + d * counts + position % counts

  def bank_base(self, fields: Fields | None = None, xp: ModuleType = np):
    """Padded-vector position of banking t = 0 from each key; banking t
    reads `bank_position(bank_base, t)` (default: every padded key of
    `chunk_fields`). A banker not on the board (`num_off`) gets -1 - that
    position, so the bank minimum can be told from the base alone."""
    fields = self.chunk_fields() if fields is None else fields
    base = np.asarray(self.padded_index(*self.after_bank(fields, 0)))
    if self.num_off:
      base = np.where(np.asarray(fields[0]) < self.num_off, -1 - base, base)
    return xp.asarray(base, np.int32)

  def padded_start(self, w0, xp: ModuleType = np):
    """W0 [B, D, F, E] as the padded start vector [padded_size]."""
    w0 = xp.asarray(w0)
    pad = xp.asarray(self.past_goal_values(), w0.dtype)
    pad = xp.broadcast_to(pad[:, :, None, None],
                          pad.shape + self.key_shape[2:])
    return xp.append(xp.concatenate([w0, pad], axis=1).reshape(-1),
                     xp.zeros((), w0.dtype))

  def past_goal_values(self) -> np.ndarray:
    """[B, bank_padding] what the padding columns hold: the start value of
    a player with banked-score index d whose opponent just banked goal + j
    units: 0 (the game is lost) without a final round, else the chance to
    pass that bar in one last turn (`final_round`); 0 again from the cap
    on, where the model takes the leader to have won."""
    B = self.num_scores
    if not self.rules.final_round:
      return np.zeros((B, self.bank_padding))
    d = np.arange(B)[:, None]
    j = np.arange(self.bank_padding)[None, :]
    gap = self.goal + j - self.score_units(d)   # the tie's turn total
    floor = self.bank_floor(d)
    need = np.maximum(gap + 1, floor)
    tie = self.rules.ties_shared & (gap >= floor)
    return np.where(j < self.past_goal,
                    final_round.chaser_wins(self.rules, need, tie), 0.0)

  def unpad(self, vector):
    """W0 [B, D, F, E] from the padded start vector (numpy or jax)."""
    B, D, F, E = self.key_shape
    return vector[:-1].reshape(B, self.padded_width, F, E)[:, :D]

  def bank_values(self, padded: np.ndarray, fields: Fields,
                  rows: int) -> np.ndarray:
    """[k, rows] value to the banker of banking t = 0 .. rows - 1 units from
    the k keys `fields`: 1 - W0 of the opponent's next key, 1 where it wins.

    Args:
      padded: `padded_start(w0)`.
      fields: (b, d, f, e) index arrays of the k keys.
      rows: number of turn totals.
    """
    t = np.arange(rows)
    return 1 - padded[self.bank_position(self.bank_base(fields)[:, None],
                                         t[None, :])]

  # The full value array of value iteration.
  @property
  def num_chunks(self) -> int:
    return -(-self.num_keys // self.chunk_keys)

  @property
  def value_shape(self) -> tuple[int, int, int, int]:
    return (self.num_chunks, self.num_rows + 1, self.dice_states,
            self.chunk_keys)

  def chunk_fields(self) -> Fields:
    """(b, d, f, e) of every padded key of the chunks, [C * Kc] each."""
    k = np.arange(self.num_chunks * self.chunk_keys)
    return self.key_fields(np.where(k < self.num_keys, k, 0))

  def start_values(self, values):
    """W0 [B, D, F, E] from the full values [C, T + 1, S, Kc]."""
    if self.rules.hands:    # each key's own whole hand
      k = np.arange(values.shape[0] * self.chunk_keys)
      f = self.key_fields(np.where(k < self.num_keys, k, 0))[2]
      n = self.start_state(f).reshape(values.shape[0], 1, -1) - 1
      flat = values[np.arange(values.shape[0])[:, None, None], 0, n,
                    np.arange(self.chunk_keys)[None, None]].reshape(-1)
    else:
      flat = values[:, 0, self.dice_states - 1, :].reshape(-1)
    return flat[:self.num_keys].reshape(self.key_shape)

  def chunk_top_row(self) -> np.ndarray:
    """[C] highest row any key of the chunk needs (rows above are wins)."""
    b = self.chunk_fields()[0].reshape(self.num_chunks, self.chunk_keys)
    return np.asarray(self.t_max(b).max(axis=1), np.int32)

  def terminal_mask(self) -> np.ndarray:
    """[C, T + 1, 1, Kc] bool: entries that are terminal (value 1)."""
    b = self.chunk_fields()[0].reshape(self.num_chunks, 1, 1, self.chunk_keys)
    t = np.arange(self.num_rows + 1).reshape(1, -1, 1, 1)
    return t > self.t_max(b)
