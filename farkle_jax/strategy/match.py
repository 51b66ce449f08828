"""A game of a person against the computer, with the cost of every decision
(docs/model.md §7), for any number of players.

The game is an immutable `MatchState`; `roll`, `keep` and `decide` return
the next state, so the terminal game and the web explorer drive the same
rules. Seat 0 is the person, the other seats the computer. Each decision
of the person is recorded with the win probability of the move made and of
the best move (everyone optimal from there on); the difference is what the
decision gave away. Against one player the computer plays a strategy of the
catalog; against more it plays optimally. The game asks the solved game by
key (`SolvedGame` or `SeatGame`: opening_key, key_scores, choices_at,
decision_at, bank_minimum_at, after_bank, after_farkle).
"""

from __future__ import annotations

import random
from typing import NamedTuple, Sequence

import numpy as np

from farkle_jax.game import dice as dice_lib
from farkle_jax.game.layout import N_DICE
from farkle_jax.game.rules import Rules
from farkle_jax.strategy import catalog
from farkle_jax.strategy.game_protocol import Game
from farkle_jax.strategy.solved_game import Choice, PositionError, SolvedGame
from farkle_jax.strategy.solved_game import dice_count

PERSON, COMPUTER = 0, 1   # seats; with more players, seats 1.. are computers
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


def names(players: int) -> tuple[str, ...]:
  """What the seats are called: you, then the computer (or computers)."""
  if players == 2:
    return NAMES
  return ("you",) + tuple(f"computer {i}" for i in range(1, players))


class MatchState(NamedTuple):
  """A game in progress; the key is as the player to move sees it."""
  key: tuple[int, ...]            # the game's key (indices), mover's view
  mover: int                      # seat: PERSON, or a computer's
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
  players: int = 2                # seats at the table
  leader: int = -1                # final round of the seat engine: the
                                  #   seat that reached the goal (-1: none)
  holder: int = -1                # ... the seat holding the bar
  final: tuple[int, ...] = ()     # ... each seat's total banked in it
                                  #   (0: none), by seat
  sharers: tuple[int, ...] = ()   # shared final-round ties: the seats
                                  #   sharing the win (winner None)


def start(game: Game, first: int = PERSON, b: int = 0, d: int = 0,
          at: Sequence[int] | None = None) -> MatchState:
  """A new game from banked scores b (first player) and d (second), or
  `at`: every seat's (points, seat order), for any number of players."""
  players = game.players
  at = tuple(at) if at is not None else (b, d) + (0,) * (players - 2)
  if len(at) != players or not 0 <= first < players:
    raise PositionError(f"a game of {players} players: {players} scores and "
                        f"a first seat from 0 to {players - 1}")
  key = game.opening_key(at[first:] + at[:first])
  if game.rules.hands:   # you hold hand 1 (rules.hands[0]), the computer 2..
    key = key[:players] + tuple((first + i) % players
                                for i in range(players))
  return MatchState(key, first, 0, _whole_hand(game, key), (), "roll", None,
                    1, (),
                    (f"{names(players)[first]} to play first",),
                    players=players)


def scores(game: Game, s: MatchState) -> tuple[int, ...]:
  """Banked points of every seat, the person's first."""
  mine = list(game.key_scores(s.key))   # the mover's first
  if s.final:   # the final round of the seat engine: its totals
    k = s.players - s.mover
    seats = mine[k:] + mine[:k]
    return tuple(y or x for x, y in zip(seats, s.final))   # y >= goal
  if s.bar:
    mine[1] = s.bar   # the leader's total, past the last score a key holds
  if s.phase == "over" and (s.winner == s.mover or s.mover in s.sharers):
    mine[0] += s.t    # the winning bank
  k = s.players - s.mover
  return tuple(mine[k:] + mine[:k])


def options(game: Game, s: MatchState, dice: Sequence[int] | None = None
            ) -> tuple[Choice, ...]:
  """Every way to set aside the dice showing (or `dice`), best first, with
  the mover's win probability after each (the last turn's own chances in
  a final round)."""
  dice = s.dice if dice is None else tuple(dice)
  if s.leader >= 0:   # the final round of the seat engine
    return game.last_turns.choices(s.key, s.bar, _later(s), s.t, s.n, dice,
                                   _holders(s))
  if s.bar:   # the final round: two players, a SolvedGame
    return game.last_turn_choices_at(s.key, s.bar, s.t, s.n, dice)
  return game.choices_at(s.key, s.t, s.n, dice)


def roll(game: Game, s: MatchState, dice: Sequence[int]) -> MatchState:
  """The player to move rolls `dice` (their faces); a farkle ends the turn."""
  _expect(s, "roll")
  choices = options(game, s, dice)
  who = names(s.players)[s.mover]
  text = " ".join(map(str, dice))
  if choices:
    return s._replace(dice=tuple(dice), phase="keep",
                      log=s.log + (f"{who} rolled {text}",))
  if s.leader >= 0:
    return _next_chaser(game, s, f"{who} rolled {text}: farkle")
  if s.bar:
    return s._replace(phase="over", winner=1 - s.mover, log=s.log + (
        f"{who} rolled {text}: farkle, {NAMES[1 - s.mover]} won",))
  fields = game.after_farkle(s.key)
  lost = game.key_scores(s.key)[0] - game.key_scores(fields)[-1]
  note = (f", and lost {lost} points for {game.rules.penalty_count} "
          "farkles in a row" if lost else "")
  return _next_turn(game, s, fields, f"{who} rolled {text}: farkle{note}")


def keep(game: Game, s: MatchState, kept: Sequence[int]) -> MatchState:
  """The player to move sets the dice `kept` aside (faces, any order)."""
  _expect(s, "keep")
  choices = options(game, s)
  want = sorted(map(str, kept))
  choice = next((c for c in choices if sorted(map(str, c.kept)) == want),
                None)
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
                 log=s.log + (f"{names(s.players)[s.mover]} kept "
                              f"{_faces(choice)}: "
                              f"turn total {choice.t}, "
                              f"{dice_words(game, choice.n)} to roll",))
  if choice.wins_now:
    return _bank(game, s)
  if s.leader >= 0:   # may bank once past the bar
    may = game.last_turns.may_bank(s.key, s.bar, choice.t)
    return s._replace(phase="decide" if may else "roll")
  if s.bar:   # the last turn: roll until past the bar (or at a shared tie)
    may = game.last_turn_decision_at(s.key, s.bar, s.t, s.n).bank
    return s._replace(phase="roll" if may is None else "decide")
  if choice.t < game.bank_minimum_at(s.key):
    return s._replace(phase="roll")
  return s._replace(phase="decide")


def decide(game: Game, s: MatchState, action: str) -> MatchState:
  """The player to move banks ("bank") or rolls on ("roll")."""
  _expect(s, "decide")
  if action not in ("bank", "roll"):
    raise PositionError(f"action {action!r}: one of bank, roll")
  if s.mover == PERSON:
    dec = _decision(game, s)
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


def opponents(game: Game) -> tuple[str, ...]:
  """The strategies the computer may play in `game`: the catalog against
  one player of the two-player engine, else optimal play only."""
  return catalog.NAMES if isinstance(game, SolvedGame) else ("optimal",)


class Computer:
  """The computer's play: against one player a strategy of the catalog
  (optimal, maxscore, bank:X, ...), its turn policy built per start-of-turn
  key as needed; against more, optimal play (the best choice and the better
  of bank and roll for the seat to move)."""

  def __init__(self, game: Game, name: str = "optimal"):
    self.name = name
    self.game = game
    self.strategy = None
    if opponents(game) == ("optimal",):   # a run of the seat engine
      if name != "optimal":
        raise catalog.StrategyError(
            f"opponent {name!r}: in a game solved by the seat engine "
            f"({game.players} players) the computer plays optimal only")
    elif not game.rules.dice_alike:
      if name != "optimal":
        raise catalog.StrategyError(
            f"opponent {name!r}: with dice that differ (rules.dice, "
            "rules.hands) the computer plays optimal only")
    else:
      ctx = catalog.Context(game.layout, game.run.roll, game.run.w0)
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
    if wins or s.bar or self.strategy is None:
      return (wins or choices)[0]
    prefer, _ = self._policy(s)
    unit, top = self.game.layout.unit, prefer.shape[0] - 1
    by_state = sorted(choices, key=lambda c: (c.t, c.n))
    return max(by_state, key=lambda c: prefer[min(c.t // unit, top), c.n - 1])

  def action(self, s: MatchState) -> str:
    """'bank' or 'roll' for the computer at its decision (a last turn's
    by its own chance)."""
    if self.strategy is None or s.bar:
      return _decision(self.game, s).best
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
  """Seeded dice: fair, or weighted as `rules.dice` says; where the dice
  differ (`rules.dice`, `rules.hands`), each die by its own chances."""

  def __init__(self, seed: int | None = None, rules: Rules | None = None):
    self._random = random.Random(seed)
    self._rules = rules
    self._chances = ([float(p) for p in rules.face_chances]
                     if rules is not None and rules.dice_alike
                     and rules.dice else None)

  def roll(self, n: int) -> tuple:
    """n dice (faces); where the dice differ, dice state n ('A1'-style
    faces, `game.hand_rolls`)."""
    if self._rules is not None and not self._rules.dice_alike:
      return self._roll_hand(n)
    if self._chances is None:     # the fair path keeps its seeded games
      return tuple(self._random.randint(1, 6) for _ in range(n))
    return tuple(self._random.choices(range(1, 7), self._chances, k=n))

  def _roll_hand(self, n: int) -> tuple:
    specs = self._rules.hand_specs
    hand, left = dice_lib.table_states(specs)[n - 1]
    kinds = dice_lib.kinds(specs[hand])
    out = []
    for k, (chances, m) in enumerate(zip(kinds.chances, left)):
      faces = self._random.choices(range(1, 7), [float(p) for p in chances],
                                   k=m)
      out += [face if len(left) == 1 else f"{chr(65 + k)}{face}"
              for face in faces]
    return tuple(out)


def _expect(s: MatchState, phase: str) -> None:
  if s.phase != phase:
    wanted = {"roll": "a roll", "keep": "dice to keep",
              "decide": "bank or roll", "over": "nothing: the game is over"}
    raise PositionError(f"the game waits for {wanted[s.phase]}, not "
                        f"{wanted[phase]}")


def _faces(c: Choice) -> str:
  return f"{' '.join(map(str, c.kept))} ({c.points})"


def _where(game: Game, s: MatchState) -> str:
  you, *others = scores(game, s)
  roll_text = f", rolled {' '.join(map(str, s.dice))}" if s.dice else ""
  return (f"turn {s.turn}, you {you} vs {', '.join(map(str, others))}, "
          f"turn total {s.t} with {dice_words(game, s.n)}{roll_text}")


def _decision(game: Game, s: MatchState):
  """Bank or roll on for the mover (a chaser's own in a final round)."""
  if s.leader >= 0:
    return game.last_turns.decision(s.key, s.bar, _later(s), s.t, s.n,
                                    _holders(s))
  if s.bar:   # two players: a tie at the bar, shared
    return game.last_turn_decision_at(s.key, s.bar, s.t, s.n)
  return game.decision_at(s.key, s.t, s.n)


def _holders(s: MatchState) -> int:
  """Players holding the bar of a final round of the seat engine (more
  than one only after ties, shared)."""
  return max(1, sum(x == s.bar for x in s.final))


def _later(s: MatchState) -> int:
  """Chasers still to play after the mover in the final round."""
  return s.players - 1 - (s.mover - s.leader) % s.players


def _next_chaser(game: Game, s: MatchState, text: str) -> MatchState:
  """The next chaser's last turn, or the end: the holder of the bar wins
  (the holders share the win after shared ties)."""
  if not _later(s):
    tied = tuple(i for i, x in enumerate(s.final) if x == s.bar)
    if len(tied) > 1:
      s = s._replace(phase="over", winner=None, sharers=tied, t=0)
    else:
      s = s._replace(phase="over", winner=s.holder, t=0)
    return s._replace(log=s.log + (f"{text}; {result(s)}",))
  return _next_turn(game, s, game.after_bank(s.key, 0), text)


def result(s: MatchState) -> str:
  """How the game ended, in words: 'you won', or 'you and computer 2
  share the win' after a shared tie."""
  seats = names(s.players)
  if s.sharers:
    who = [seats[i] for i in s.sharers]
    return f"{', '.join(who[:-1])} and {who[-1]} share the win"
  return f"{seats[s.winner]} won"


def _bank_final(game: Game, s: MatchState, total: int) -> MatchState:
  """A bank at the goal or in the final round of the seat engine: past
  the cap a win, else the bar for the chasers still to play."""
  who, banked = names(s.players)[s.mover], s.t
  final = tuple(total if i == s.mover else x for i, x in enumerate(
      s.final or (0,) * s.players))
  s = s._replace(final=final, t=0)
  if total >= game.rules.goal + game.rules.final_round_cap:
    return s._replace(phase="over", winner=s.mover, log=s.log + (
        f"{who} banked {banked}: {total} points, past the cap: {who} won",))
  if total == s.bar:   # a shared tie: one more holder of the bar
    return _next_chaser(game, s, f"{who} banked {banked}: {total} points, "
                        "tying the bar")
  s = s._replace(bar=total, holder=s.mover,
                 leader=s.mover if s.leader < 0 else s.leader)
  return _next_chaser(game, s, f"{who} banked {banked}: {total} points, "
                      f"the bar for the last turns{tie_words(game)}")


def _bank(game: Game, s: MatchState) -> MatchState:
  who = names(s.players)[s.mover]
  total = game.key_scores(s.key)[0] + s.t
  reached = total >= game.rules.goal
  if s.leader >= 0 or (reached and game.rules.final_round
                       and hasattr(game, "last_turns")):
    return _bank_final(game, s, total)
  if s.bar and total == s.bar:   # two players, a shared tie
    s = s._replace(phase="over", sharers=(0, 1))
    return s._replace(log=s.log + (
        f"{who} banked {s.t}: {total} points, tying; {result(s)}",))
  if s.bar or reached and not game.rules.final_round:
    return s._replace(phase="over", winner=s.mover, log=s.log + (
        f"{who} banked {s.t}: {total} points, {who} won",))
  if reached:   # the final round (two players): one last turn
    other = NAMES[1 - s.mover]
    s = _next_turn(game, s, (s.key[1], s.key[0], s.key[3], s.key[2]),
                   f"{who} banked {s.t}: {total} points; {other} has one "
                   f"last turn to beat {total}{tie_words(game)}")
    return s._replace(bar=total)
  return _next_turn(game, s, game.after_bank(s.key, s.t),
                    f"{who} banked {s.t}: {total} points")


def tie_words(game: Game) -> str:
  """What a tie at the bar does, where ties are shared."""
  return (" (ties share the win)"
          if game.rules.ties_shared else "")


def _whole_hand(game: Game, key) -> int:
  """The dice state a turn of `key` starts from (six dice alike: 6)."""
  if game.rules.dice_alike:
    return N_DICE
  if hasattr(game, "seats"):   # the seat engine: the mover's hand
    return int(game.seats.start_state(game.hand(key)))
  return int(game.layout.start_state(key[2]))


def dice_words(game: Game, n: int) -> str:
  """'5 dice', or where the dice differ the dice state ('dice ABBBB')."""
  return dice_count(n) if game.rules.dice_alike else game.dice_words(n)


def _next_turn(game: Game, s: MatchState, fields, text: str) -> MatchState:
  key = tuple(int(x) for x in fields)
  return s._replace(key=key, mover=(s.mover + 1) % s.players, t=0,
                    n=_whole_hand(game, key),
                    dice=(), phase="roll", turn=s.turn + 1,
                    log=s.log + (text,))
