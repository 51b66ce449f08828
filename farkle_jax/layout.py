"""Layout of the solver state: which array element holds which game state.

A game state is s = (t, n, b, d, f, e) (model.md §2). Its start-of-turn part
(b, d, f, e) is the *key*; keys are numbered k = ((b*D + d)*F + f)*E + e with
scores as indices from the floor in score units (D = B). The in-turn part
(t, n) is a row t = 0..T-1 (turn total in score units) and a column n - 1.

The full value array has shape [C, T + 1, 6, Kc]: keys are cut into C chunks of
Kc (the last one padded with copies of key 0), and row T is a constant row of
ones that stands for every terminal (won) state beyond the last row. A state
with t above t_max(b) = max(bank_minimum - 1, goal - 1 - b) is terminal (the
player banks and wins), so its entry is 1 as well; such padding is not counted
as a model state.

The start-of-turn values W0[b, d, f, e] = W(0, 6, b, d, f, e) determine all
others; they are the solver's checkpointed state.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from farkle_jax.rules import Rules

N_DICE = 6
BYTES = {"float64": 8, "float32": 4}


@dataclasses.dataclass(frozen=True)
class StateLayout:
  """Sizes and index tables of the state of one rule set.

  Attributes:
    rules: the rule set.
    chunk_keys: keys per chunk (Kc).
  """
  rules: Rules
  chunk_keys: int = 2048

  # Sizes in score units.
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
  def num_scores(self) -> int:
    """B = D: banked scores from the floor to goal - step."""
    return self.goal - self.low

  @property
  def num_farkle(self) -> int:
    return self.rules.farkle_states

  @property
  def key_shape(self) -> tuple[int, int, int, int]:
    return (self.num_scores, self.num_scores, self.num_farkle, self.num_farkle)

  @property
  def num_keys(self) -> int:
    return int(np.prod(self.key_shape))

  @property
  def num_chunks(self) -> int:
    return -(-self.num_keys // self.chunk_keys)

  def t_max(self, b_index: np.ndarray | int) -> np.ndarray | int:
    """Largest non-terminal turn total (units) for banked-score index b."""
    b = np.asarray(b_index) + self.low
    return np.maximum(self.bank_min - 1, self.goal - 1 - b)

  @property
  def num_rows(self) -> int:
    """T: turn-total rows (the largest t_max + 1)."""
    return int(self.t_max(0)) + 1

  @property
  def value_shape(self) -> tuple[int, int, int, int]:
    return (self.num_chunks, self.num_rows + 1, N_DICE, self.chunk_keys)

  @property
  def num_states(self) -> int:
    """Non-terminal model states (t <= t_max(b)), as counted in model.md."""
    tcount = self.t_max(np.arange(self.num_scores)) + 1
    per_b = self.num_scores * self.num_farkle ** 2 * N_DICE
    return int(tcount.sum()) * per_b

  def index_of(self, score: int, field: str = "score") -> int:
    """Banked-score index of `score` points; ValueError if out of range."""
    if score % self.unit or not self.rules.low <= score < self.rules.goal:
      raise ValueError(
          f"{field}={score} is not a banked score of these rules: allowed are "
          f"multiples of {self.unit} from {self.rules.low} to "
          f"{self.rules.goal - self.unit}")
    return score // self.unit - self.low

  def key_index(self, b: int, d: int, f: int, e: int) -> int:
    """Flat key of banked-score indices b, d and farkle counts f, e."""
    B, D, F, E = self.key_shape
    return ((b * D + d) * F + f) * E + e

  # Index tables (numpy, int32).
  def key_fields(self) -> tuple[np.ndarray, ...]:
    """(b, d, f, e) index of every padded key, [C * Kc] each."""
    k = np.arange(self.num_chunks * self.chunk_keys)
    k = np.where(k < self.num_keys, k, 0)
    return np.unravel_index(k, self.key_shape)

  def farkle_index(self, fields=None) -> np.ndarray:
    """Flat W0 key the opponent starts from after a farkle, per key.

    Args:
      fields: (b, d, f, e) index arrays; default: every padded key.
    """
    b, d, f, e = self.key_fields() if fields is None else fields
    F = self.num_farkle
    penalised = (f == F - 1) & (self.penalty > 0)
    b_next = np.where(penalised, np.maximum(0, b - self.penalty), b)
    f_next = (f + 1) % F
    return np.asarray(self.key_index(d, b_next, e, f_next), np.int32)

  def bank_padding(self) -> int:
    """Zero columns appended to W0's d axis for banks that reach the goal."""
    return self.num_rows + 1

  def bank_base(self, fields=None) -> np.ndarray:
    """Flat index into the padded W0 of banking at t = 0, per key.

    Banking t from key (b, d, f, e) gives the opponent the key
    (d, b + t, e, 0); in W0 padded to [B, D + pad, F, E] its flat index is
    `bank_base + t * F * E`. Padded entries are 0 (the banker has won).

    Args:
      fields: (b, d, f, e) index arrays; default: every padded key.
    """
    b, d, f, e = self.key_fields() if fields is None else fields
    B, D, F, E = self.key_shape
    width = D + self.bank_padding()
    return np.asarray(((d * width + b) * F + e) * E, np.int32)

  def padded_start(self, w0: np.ndarray) -> np.ndarray:
    """W0 [B, D, F, E] with the zero columns of `bank_padding`, flattened:
    the vector `bank_base` indexes (NumPy twin of bellman.padded_start)."""
    pad = ((0, 0), (0, self.bank_padding()), (0, 0), (0, 0))
    return np.pad(np.asarray(w0), pad).reshape(-1)

  def bank_values(self, padded: np.ndarray, fields, rows: int) -> np.ndarray:
    """[k, rows] value to the banker of banking t = 0 .. rows - 1 units from
    keys `fields`: 1 - W0 of the opponent's next key, 1 where it wins.

    Args:
      padded: `padded_start(w0)`.
      fields: (b, d, f, e) index arrays of the k keys.
      rows: number of turn totals.
    """
    F, E = self.key_shape[2:]
    t = np.arange(rows)
    return 1 - padded[self.bank_base(fields)[:, None] + t[None, :] * F * E]

  def chunk_top_row(self) -> np.ndarray:
    """[C] highest row any key of the chunk needs (rows above are terminal)."""
    b = self.key_fields()[0].reshape(self.num_chunks, self.chunk_keys)
    return np.asarray(self.t_max(b).max(axis=1), np.int32)

  def terminal_mask(self) -> np.ndarray:
    """[C, T + 1, 1, Kc] bool: entries that are terminal (value 1)."""
    b = self.key_fields()[0].reshape(self.num_chunks, 1, 1, self.chunk_keys)
    t = np.arange(self.num_rows + 1).reshape(1, -1, 1, 1)
    return t > self.t_max(b)

  def memory_bytes(self, dtype: str = "float64", width: int = 8,
                   sets: int = 256) -> int:
    """Peak bytes of a full-state sweep: the value array plus temporaries."""
    size = BYTES[dtype]
    values = int(np.prod(self.value_shape)) * size
    keys = self.num_keys * size * 4 + self.num_chunks * self.chunk_keys * 16
    step = 3 * sets * width * self.chunk_keys * size
    return values + keys + step
