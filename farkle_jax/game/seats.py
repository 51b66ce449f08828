"""The state layout of a game of N players: the one owner of its index
arithmetic (docs/model.md §8).

A start-of-turn *key* holds every player's banked score and farkle count in
turn order from the player to move: (s_0, .., s_{N-1}, f_0, .., f_{N-1}),
scores as indices from the floor in score units (B of them; under an entry
minimum and a penalty the scores of players off the board first, as for
two players: `ScoreUnits.num_off`) and counts 0 .. F - 1, numbered
row-major over the shape (B,) * N + (F,) * N. A key's value is a vector of
N win probabilities in the same order: component 0 is the player to move.

When a turn ends, the next player moves: the key rotates by one seat. A bank
of t units gives (s_1, .., s_{N-1}, on_board(s_0) + t, f_1, .., f_{N-1}, 0);
a farkle
gives (s_1, .., s_{N-1}, s_0', f_1, .., f_{N-1}, f_0') with the penalty rule of
two players. Seen from the player who moved, the next key's vector is rotated
back by one (`from_next`).

In-turn states (t, n) sit at flat offset t * 6 + n - 1 of a turn array, as
for two players (`StateLayout.turn_offset`); rows above `t_max(s_0)` are
wins, and row T stands for all of them.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType

import numpy as np

from farkle_jax.game.layout import ScoreUnits
from farkle_jax.game.rules import Rules

Fields = tuple  # (s_0, .., s_{N-1}, f_0, .., f_{N-1}): index arrays or ints


@dataclasses.dataclass(frozen=True)
class SeatsLayout(ScoreUnits):
  """Sizes and index arithmetic of the N-player state (hashable).

  Attributes:
    rules: the rule set; `rules.players` is N.
  """
  rules: Rules

  @property
  def players(self) -> int:
    return self.rules.players

  @property
  def num_scores(self) -> int:
    """B: banked-score indices: those of players off the board
    (`num_off`: an entry minimum under a penalty), then the scores from
    the floor to goal - step."""
    return self.num_off + self.goal - self.low


  @property
  def key_shape(self) -> tuple[int, ...]:
    n = self.players
    return (self.num_scores,) * n + (self.num_farkle,) * n


  @property
  def score_stride(self) -> int:
    """Flat-key distance between neighbouring scores of the last seat."""
    return self.num_farkle ** self.players

  # Keys.
  def opening(self) -> Fields:
    """The key of the game's start: every score 0 (off the board where
    that has an index of its own), no farkles; under `hands` player i
    holds hand i, player 1 to move."""
    n = self.players
    counts = tuple(range(n)) if self.rules.hands else (0,) * n
    return (self.index_of(0),) * n + counts

  def key_index(self, fields: Fields):
    """Flat key of `fields` (arrays or ints)."""
    return np.ravel_multi_index(tuple(fields), self.key_shape)

  def key_fields(self, keys=None) -> Fields:
    """Fields of flat keys (default: every key 0 .. K - 1)."""
    keys = np.arange(self.num_keys) if keys is None else np.asarray(keys)
    return np.unravel_index(keys, self.key_shape)

  def scores_of(self, fields: Fields) -> tuple:
    return tuple(fields[:self.players])

  def counts_of(self, fields: Fields) -> tuple:
    return tuple(fields[self.players:])

  # Transitions that end a turn.
  def farkle_fields(self, fields: Fields) -> Fields:
    """The next player's key after a farkle."""
    s, f = self.scores_of(fields), self.counts_of(fields)
    s0, f0 = s[0], f[0]
    if self.rules.hands:   # the farkle fields hold the hands: they rotate
      return s[1:] + (s0,) + f[1:] + (f0,)
    if self.penalty > 0:
      s0 = np.where(f0 == self.num_farkle - 1, self.penalized(s0), s0)
    return s[1:] + (s0,) + f[1:] + ((f0 + 1) % self.num_farkle,)

  def bank_base(self, fields: Fields) -> np.ndarray:
    """Flat key of banking 0 units; banking t reads `bank_base + t *
    score_stride` while on_board(s_0) + t < B (`after_bank`)."""
    return self.key_index(self.after_bank(fields, 0))

  def after_bank(self, fields: Fields, t) -> Fields:
    """The next player's key after banking t units; its last score lies
    at or past B where the bank reached the goal. A bank puts the banker
    on the board and starts their farkle count again (under `hands` the
    field holds the banker's hand, kept)."""
    s, f = self.scores_of(fields), self.counts_of(fields)
    count = np.asarray(f[0]) * (1 if self.rules.hands else 0)
    return s[1:] + (self.on_board(s[0]) + t,) + f[1:] + (count,)

  def bank_targets(self, values, xp: ModuleType = np):
    """`values` [B, .., B, F, .., F, ...] of every key arranged on the
    axes of the banker's key: out[x, s_1, .., s_{N-1}, c, f_1, ..,
    f_{N-1}] is the value of `after_bank` of a banker (s_0, s_1, .., f_0,
    f_1, ..) whose bank reaches score index x (`on_board(s_0) + t`); c
    stands for f_0 (under `hands` the kept hand; otherwise the count
    starts again, and c has one entry, count 0, for every f_0)."""
    n = self.players
    if not self.rules.hands:
      values = values[(slice(None),) * (2 * n - 1) + (slice(0, 1),)]
    return xp.moveaxis(xp.moveaxis(values, n - 1, 0), 2 * n - 1, n)

  def final_row(self, others, reach):
    """Row of the final-round table (`solver.last_turns`, [P * B^(N-1),
    N]) for a bank to `reach` score indices (at or past the goal, short of
    the cap) with the others' scores `others` (`others_index`)."""
    return (reach - self.num_scores) * self.num_scores ** (
        self.players - 1) + others

  def others_index(self, fields: Fields):
    """Index of the scores of seats 1 .. N-1 among B^(N-1), row-major."""
    return self.scores_index(self.scores_of(fields)[1:])

  def scores_index(self, scores: tuple):
    """Index of a tuple of m banked-score indices among B^m, row-major
    (0 for none)."""
    if not len(scores):
      return 0
    return np.ravel_multi_index(tuple(scores),
                                (self.num_scores,) * len(scores))

  def others_of_base(self, base):
    """`others_index` of keys whose `bank_base` is `base` (the banker's
    score, in the last seat there, and the counts dropped)."""
    return base // self.score_stride // self.num_scores

  def start_of_base(self, base, xp: ModuleType = np):
    """The dice state (1..S) a turn starts from for the mover of keys whose
    `bank_base` is `base`: the whole hand, under `hands` the mover's own,
    which a bank keeps in the base's last farkle field."""
    return self.start_state(base % self.num_farkle, xp)

  def stage(self, fields: Fields) -> np.ndarray:
    """Order of the ordered sweep (docs/model.md §8): blocks of bank_min
    score sums from the highest down; within a block (with a penalty)
    classes of the farkle-count sum, highest first."""
    n, top = self.players, self.num_scores - 1
    total = sum(np.asarray(x, np.int64) for x in self.scores_of(fields))
    block = (n * top - total) // self.bank_min
    if self.num_farkle == 1:
      return block
    classes = self.stages_per_block - 1
    count = sum(np.asarray(x, np.int64) for x in self.counts_of(fields))
    return block * (classes + 1) + (classes - count)

  @property
  def stages_per_block(self) -> int:
    """Stages of one block of bank_min score sums: its farkle-count classes
    (stage // stages_per_block is the block)."""
    return self.players * (self.num_farkle - 1) + 1

  def stage_sizes(self) -> np.ndarray:
    """Keys per stage (as `np.bincount(stage(all keys))`)."""
    return self.stage_scores().sum(axis=1)

  def stage_scores(self) -> np.ndarray:
    """[S, B] keys per stage by the mover's banked-score index, from the
    sizes alone: sums of the other N - 1 scores and of the N farkle counts
    are counted by convolution."""
    n, B, F = self.players, self.num_scores, self.num_farkle
    others, counts = np.ones(1, np.int64), np.ones(1, np.int64)
    for _ in range(n - 1):
      others = np.convolve(others, np.ones(B, np.int64))
    for _ in range(n):
      counts = np.convolve(counts, np.ones(F, np.int64))
    top = n * (B - 1)
    mover, rest = np.arange(B)[:, None], np.arange(len(others))[None]
    block = (top - mover - rest) // self.bank_min           # `stage`
    blocks = top // self.bank_min + 1
    per_block = np.bincount(
        (block * B + mover).ravel(), minlength=blocks * B,
        weights=np.broadcast_to(others, block.shape).ravel()
    ).astype(np.int64).reshape(blocks, B)
    # Within a block, the farkle-count classes highest first.
    return (per_block[:, None, :] * counts[::-1][None, :, None]).reshape(
        -1, B)

  def raised_key(self, reader: Fields, target: Fields) -> np.ndarray:
    """Flat key of `target` with its scores raised until its score sum lies
    in the block before `reader`'s, solved before it in every sweep: the
    last seat first, then the others in seat order, each short of the
    goal; -1 where they cannot take it all."""
    n, top = self.players, self.num_scores - 1
    have = sum(np.asarray(x, np.int64) for x in self.scores_of(reader))
    # `stage`: the block before starts one sum above the top of this one.
    need = have + (n * top - have) % self.bank_min + 1
    scores = [np.asarray(x, np.int64) for x in self.scores_of(target)]
    left = need - sum(scores)
    for seat in [n - 1] + list(range(n - 1)):
      add = np.clip(left, 0, top - scores[seat])
      scores[seat] = scores[seat] + add
      left = left - add
    key = self.key_index(tuple(scores) + self.counts_of(target))
    return np.where(left > 0, -1, key)

  def raised_to(self, keys, total, xp: ModuleType = np):
    """Flat keys of `keys` with their scores raised until their index sum
    is `total` (the last seat first, then the others in seat order, each
    short of the goal, as `raised_key`), or `keys` themselves where they
    cannot take it all (arrays of `xp`)."""
    n, top = self.players, self.num_scores - 1
    fields = xp.unravel_index(xp.minimum(keys, self.num_keys - 1),
                              self.key_shape)
    scores = list(fields[:n])
    left = total - sum(scores)
    for seat in [n - 1] + list(range(n - 1)):
      add = xp.clip(left, 0, top - scores[seat])
      scores[seat], left = scores[seat] + add, left - add
    raised = xp.ravel_multi_index(tuple(scores) + tuple(fields[n:]),
                                  self.key_shape, mode="clip")
    return xp.where(left > 0, keys, raised)

  @staticmethod
  def from_next(values, xp: ModuleType = np, axis: int = 0):
    """Values of the next player's key seen from the player who moved:
    component i is the next key's component i - 1 (mod N)."""
    return xp.roll(values, 1, axis=axis)

  def seat_order(self, mover: int) -> np.ndarray:
    """Absolute seat of each component of a key whose mover sits at seat
    `mover`."""
    return (mover + np.arange(self.players)) % self.players
