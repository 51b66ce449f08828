"""A game of a person against the computer, with the cost of every decision
(docs/model.md §7).

The game is an immutable `MatchState`; `roll`, `keep` and `decide` return
the next state, so the terminal game and the web explorer drive the same
rules. Seat 0 is the person, seat 1 the computer. Each decision of the
person is recorded with the win probability of the move made and of the
best move (both players optimal from there on); the difference is what the
decision gave away. The computer plays a strategy of the catalog.
"""

from __future__ import annotations

import random
from typing import NamedTuple, Sequence

import numpy as np

from farkle_jax.game.layout import N_DICE
from farkle_jax.strategy import catalog
from farkle_jax.strategy.solved_game import Choice, Position
from farkle_jax.strategy.solved_game import PositionError, SolvedGame

PERSON, COMPUTER = 0, 1
NAMES = ("you", "computer")


class Move(NamedTuple):
  """A decision of the person and what it cost."""
  turn: int           # the game's turn number
  where: str          # the position and roll, in words
  made: str           # the move made
  best: str           # the best move
  made_win: float     # win probability after the move made
  best_win: float     # ... after the best move

  @property
  def loss(self) -> float:
    return max(0.0, self.best_win - self.made_win)


class MatchState(NamedTuple):
  """A game in progress; the key is as the player to move sees it."""
  key: tuple[int, int, int, int]  # (b, d, f, e) indices, mover's view
  mover: int                      # PERSON or COMPUTER
  t: int                          # turn total, points
  n: int                          # dice to roll
  dice: tuple[int, ...]           # the roll awaiting a choice, else ()
  phase: str                      # "roll", "keep", "decide" or "over"
  winner: int | None
  turn: int                       # turns begun so far
  moves: tuple[Move, ...]         # the person's decisions
  log: tuple[str, ...]            # what happened, in words
  bar: int = 0                    # final round: the total the mover must
                                  # beat in this last turn (0: none)


def start(game: SolvedGame, first: int = PERSON, b: int = 0, d: int = 0
          ) -> MatchState:
  """A new game from banked scores b (first player) and d (second)."""
  if game.rules.final_round and game.rules.final_round_ties != "leader":
    raise PositionError("games against the computer play the final round "
                        "with final_round_ties = 'leader' only")
  key = game.layout.opening_key(b, d)
  return MatchState(key, first, 0, N_DICE, (), "roll", None, 1, (),
                    (f"{NAMES[first]} to play first",))


def scores(game: SolvedGame, s: MatchState) -> tuple[int, int]:
  """Banked points of the person and of the computer."""
  me, other = (int(game.layout.points(i)) for i in s.key[:2])
  if s.bar:
    other = s.bar   # the leader's total, past the last score a key holds
  if s.phase == "over" and s.winner == s.mover:
    me += s.t       # the winning bank
  return (me, other) if s.mover == PERSON else (other, me)


def position(game: SolvedGame, s: MatchState) -> Position:
  """The position of the player to move."""
  b, d, f, e = s.key
  lay = game.layout
  return Position(int(lay.points(b)), int(lay.points(d)), int(f), int(e),
                  s.t, s.n, bool(b >= lay.num_off), bool(d >= lay.num_off))


def options(game: SolvedGame, s: MatchState, dice: Sequence[int] | None = None
            ) -> tuple[Choice, ...]:
  """Every way to set aside the dice showing (or `dice`), best first, with
  the mover's win probability after each (the last turn's own chances in
  a final round)."""
  dice = s.dice if dice is None else tuple(dice)
  if s.bar:
    p = position(game, s)
    return game.advise_last_turn(p.b, s.bar, s.t, s.n, dice,
                                 p.b_on).choices
  return game.advise(position(game, s), dice).choices


def roll(game: SolvedGame, s: MatchState, dice: Sequence[int]) -> MatchState:
  """The player to move rolls `dice` (their faces); a farkle ends the turn."""
  _expect(s, "roll")
  choices = options(game, s, dice)
  who = NAMES[s.mover]
  text = " ".join(map(str, dice))
  if choices:
    return s._replace(dice=tuple(dice), phase="keep",
                      log=s.log + (f"{who} rolled {text}",))
  if s.bar:
    return s._replace(phase="over", winner=1 - s.mover, log=s.log + (
        f"{who} rolled {text}: farkle, {NAMES[1 - s.mover]} won",))
  fields = game.layout.farkle_fields(tuple(np.array(k) for k in s.key))
  lost = s.key[0] - int(fields[1])
  note = (f", and lost {lost * game.layout.unit} points for "
          f"{game.rules.penalty_count} farkles in a row" if lost else "")
  return _next_turn(s, fields, f"{who} rolled {text}: farkle{note}")


def keep(game: SolvedGame, s: MatchState, kept: Sequence[int]) -> MatchState:
  """The player to move sets the dice `kept` aside (faces, any order)."""
  _expect(s, "keep")
  choices = options(game, s)
  want = tuple(sorted(kept, reverse=True))
  choice = next((c for c in choices if c.kept == want), None)
  if choice is None:
    allowed = "; ".join(" ".join(map(str, c.kept)) for c in choices)
    raise PositionError(f"cannot keep {' '.join(map(str, kept)) or 'nothing'}"
                        f" from {' '.join(map(str, s.dice))}: allowed are "
                        f"{allowed}")
  moves = s.moves
  if s.mover == PERSON:
    best = choices[0]
    moves += (Move(s.turn, _where(game, s), f"keep {_faces(choice)}",
                   f"keep {_faces(best)}", choice.win, best.win),)
  s = s._replace(t=choice.t, n=choice.n, dice=(), moves=moves,
                 log=s.log + (f"{NAMES[s.mover]} kept {_faces(choice)}: "
                              f"turn total {choice.t}, {_dice(choice.n)} "
                              "to roll",))
  if choice.wins_now:
    return _bank(game, s)
  if s.bar:
    return s._replace(phase="roll")   # the last turn: roll until past it
  p = position(game, s)
  if choice.t < game.bank_minimum(p.b, p.b_on):
    return s._replace(phase="roll")
  return s._replace(phase="decide")


def decide(game: SolvedGame, s: MatchState, action: str) -> MatchState:
  """The player to move banks ("bank") or rolls on ("roll")."""
  _expect(s, "decide")
  if action not in ("bank", "roll"):
    raise PositionError(f"action {action!r}: one of bank, roll")
  if s.mover == PERSON:
    dec = game.decision(position(game, s))
    made = dec.bank if action == "bank" else dec.roll
    best = max(dec.bank, dec.roll)
    move = Move(s.turn, _where(game, s), action, dec.best, made, best)
    s = s._replace(moves=s.moves + (move,))
  if action == "bank":
    return _bank(game, s)
  return s._replace(phase="roll")


def summary(s: MatchState, worst: int = 3) -> tuple[float, tuple[Move, ...]]:
  """Win probability the person gave away in all, and the costliest moves."""
  total = float(sum(m.loss for m in s.moves))
  costly = sorted((m for m in s.moves if m.loss > 0), key=lambda m: -m.loss)
  return total, tuple(costly[:worst])


class Computer:
  """The computer's play: a strategy of the catalog (optimal, maxscore,
  bank:X, ...), its turn policy built per start-of-turn key as needed."""

  def __init__(self, game: SolvedGame, name: str = "optimal"):
    ctx = catalog.Context(game.layout, game.run.roll, game.run.w0)
    self.name = name
    self.game = game
    self.strategy = catalog.strategy(name, ctx)
    self._policies: dict[int, tuple[np.ndarray, np.ndarray]] = {}

  def _policy(self, s: MatchState) -> tuple[np.ndarray, np.ndarray]:
    """(prefer [T + 1, 6], bank [T + 1, 6]) of the computer's turn."""
    cls = int(self.strategy.class_of_key[self.game.layout.key_index(*s.key)])
    if cls not in self._policies:
      prefer, bank = self.strategy.policy(np.array([cls]))
      self._policies[cls] = (np.asarray(prefer[0]), np.asarray(bank[0]))
    return self._policies[cls]

  def choose(self, s: MatchState) -> Choice:
    """The dice the computer keeps: a choice that wins, else the one whose
    turn state its strategy prefers (the first on ties)."""
    choices = options(self.game, s)
    wins = [c for c in choices if c.wins_now]
    if wins or s.bar:
      return (wins or choices)[0]
    prefer, _ = self._policy(s)
    unit, top = self.game.layout.unit, prefer.shape[0] - 1
    by_state = sorted(choices, key=lambda c: (c.t, c.n))
    return max(by_state, key=lambda c: prefer[min(c.t // unit, top), c.n - 1])

  def action(self, s: MatchState) -> str:
    """'bank' or 'roll' for the computer at its decision."""
    _, bank = self._policy(s)
    top = bank.shape[0] - 1
    return "bank" if bank[min(s.t // self.game.layout.unit, top),
                          s.n - 1] else "roll"

  def step(self, s: MatchState, dice: Sequence[int] | None) -> MatchState:
    """The computer's next step; `dice` is its roll when it must roll."""
    if s.phase == "roll":
      return roll(self.game, s, dice)
    if s.phase == "keep":
      return keep(self.game, s, self.choose(s).kept)
    return decide(self.game, s, self.action(s))


class Dice:
  """Seeded dice."""

  def __init__(self, seed: int | None = None):
    self._random = random.Random(seed)

  def roll(self, n: int) -> tuple[int, ...]:
    return tuple(self._random.randint(1, 6) for _ in range(n))


def _expect(s: MatchState, phase: str) -> None:
  if s.phase != phase:
    wanted = {"roll": "a roll", "keep": "dice to keep",
              "decide": "bank or roll", "over": "nothing: the game is over"}
    raise PositionError(f"the game waits for {wanted[s.phase]}, not "
                        f"{wanted[phase]}")


def _faces(c: Choice) -> str:
  return f"{' '.join(map(str, c.kept))} ({c.points})"


def _where(game: SolvedGame, s: MatchState) -> str:
  you, comp = scores(game, s)
  roll_text = f", rolled {' '.join(map(str, s.dice))}" if s.dice else ""
  return (f"turn {s.turn}, you {you} vs {comp}, turn total {s.t} with "
          f"{_dice(s.n)}{roll_text}")


def _dice(n: int) -> str:
  return "1 die" if n == 1 else f"{n} dice"


def _bank(game: SolvedGame, s: MatchState) -> MatchState:
  lay = game.layout
  fields = lay.after_bank(s.key, s.t // lay.unit)
  who = NAMES[s.mover]
  total = int(lay.points(fields[1]))
  if s.bar or fields[1] >= lay.num_scores and not game.rules.final_round:
    return s._replace(phase="over", winner=s.mover, log=s.log + (
        f"{who} banked {s.t}: {total} points, {who} won",))
  if fields[1] >= lay.num_scores:   # the final round: one last turn
    other = NAMES[1 - s.mover]
    s = _next_turn(s, (s.key[1], s.key[0], s.key[3], s.key[2]),
                   f"{who} banked {s.t}: {total} points; {other} has one "
                   f"last turn to beat {total}")
    return s._replace(bar=total)
  return _next_turn(s, fields, f"{who} banked {s.t}: {total} points")


def _next_turn(s: MatchState, fields, text: str) -> MatchState:
  key = tuple(int(x) for x in fields)
  return s._replace(key=key, mover=1 - s.mover, t=0, n=N_DICE, dice=(),
                    phase="roll", turn=s.turn + 1, log=s.log + (text,))
