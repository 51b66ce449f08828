"""What every solved game answers, whatever the number of players.

Two classes hold a solved run: `solved_game.SolvedGame` (two players, the
scalar engine's values, with the final round and the entry minimum under a
penalty) and `seat_game.SeatGame` (the seat engine's values, any number of
players). The front ends (`farkle_jax.advise`, the match against the
computer, the terminal game, the web explorer, `table` and `advise` with
--scores) ask only what `Game` names, so each is written once for both.

Positions are given as every player's banked score (points) and farkle
count in turn order from the player to move; every win probability comes
as a vector over the players, the mover's first. Keys are the game's own
index tuples, as the player to move sees them.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from farkle_jax.game.rules import Rules
from farkle_jax.strategy.solved_game import Choice, Decision


@runtime_checkable
class Game(Protocol):
  """A solved game in a player's hands."""

  rules: Rules
  label: str   # where the values came from (a workdir, "shipped:<name>")

  @property
  def players(self) -> int: ...

  @property
  def summary(self) -> dict[str, Any]: ...

  # Positions by scores.
  def win_probabilities(self, scores: Sequence[int],
                        counts: Sequence[int] | None = None
                        ) -> np.ndarray: ...

  def advice(self, scores: Sequence[int], t: int = 0, n: int | None = None,
             roll: Sequence[int] | None = None,
             counts: Sequence[int] | None = None) -> dict[str, Any]: ...

  def table(self, scores: Sequence[int],
            counts: Sequence[int] | None = None,
            t_last: int | None = None) -> dict[str, Any]: ...

  # A game in play, by key.
  def opening_key(self, scores: Sequence[int]) -> tuple[int, ...]: ...

  def key_scores(self, key: Sequence[int]) -> tuple[int, ...]: ...

  def choices_at(self, key, t: int, n: int, dice: Sequence[int]
                 ) -> tuple[Choice, ...]: ...

  def decision_at(self, key, t: int, n: int) -> Decision: ...

  def bank_minimum_at(self, key) -> int: ...

  def after_bank(self, key, t: int) -> tuple[int, ...]: ...

  def after_farkle(self, key) -> tuple[int, ...]: ...
