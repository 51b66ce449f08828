"""A solved run in a player's hands: win probabilities, turn tables and
advice for a roll, each in milliseconds (docs/model.md §7).

    from farkle_jax.strategy.solved_game import Position, SolvedGame
    game = SolvedGame.shipped("facebook")     # or SolvedGame.load(workdir)
    game.win_probability(Position(b=0, d=0))     # 0.5348...
    game.advise(Position(b=0, d=0), (6, 5, 3, 3, 3, 2)).choices[0]
    game.turn_table(b=0, d=0)

Only the start-of-turn values W0 are loaded (a few MB); the values inside a
turn are rebuilt by the solver's own row arithmetic, in NumPy, one key at a
time (`queries.Turns`): a query needs no JAX. Every value is the win
probability of the player to move when both players play optimally from
there on.
"""

from __future__ import annotations

import os
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from farkle_jax.game import final_round, roll_tables, scoring
from farkle_jax.game import hand_rolls
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.solver import queries, results
from farkle_jax.strategy import positions
from farkle_jax.strategy.positions import PositionError, dice_count

# Solved values that ship with the package (farkle_jax/data/<name>), from
# `python -m farkle_jax.main --config configs/<name>.py` (README).
SHIPPED = ("facebook", "default")
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")


class Position(NamedTuple):
  """A state of the game, as a player says it (points, not indices)."""
  b: int       # banked score of the player to move
  d: int       # banked score of the opponent
  f: int = 0   # farkle turns in a row of the player to move
  e: int = 0   # farkle turns in a row of the opponent
  t: int = 0   # turn total so far
  n: int = 6   # dice to roll
  # Whether each player has banked yet: only asked with an entry minimum
  # and a penalty (None: a score of 0 is not on the board, others are).
  b_on: bool | None = None
  d_on: bool | None = None


class Decision(NamedTuple):
  """Bank or roll on at a position."""
  bank: float | None  # win probability after banking (None: not allowed)
  roll: float | None  # win probability of rolling on (None: banking wins)
  best: str           # "bank" or "roll" (banking on ties, as the solver)
  # The chance that the turn ends in a farkle if the player rolls on and
  # then plays as the values say (None: banking wins, or not known).
  bust: float | None = None

  def as_dict(self) -> dict[str, Any]:
    return self._asdict()


class Choice(NamedTuple):
  """One way to set dice aside from a roll."""
  kept: tuple[int, ...]  # faces set aside, high to low
  points: int            # what they score
  t: int                 # turn total after setting them aside
  n: int                 # dice to roll next (six after hot dice)
  win: float             # win probability there, playing on optimally
  wins_now: bool         # banking there reaches the goal
  # The chance that the turn ends in a farkle from there, playing on as
  # the values say (0 where banking is taken; None: not known).
  bust: float | None = None

  def as_dict(self) -> dict[str, Any]:
    return {**self._asdict(), "kept": list(self.kept)}


class Advice(NamedTuple):
  """Every legal choice for a roll, best first, and what to do next."""
  position: Position
  roll: tuple[int, ...]
  choices: tuple[Choice, ...]  # best first; empty: a farkle
  farkle: float | None         # win probability after the farkle, if one
  decision: Decision | None    # bank or roll after the best choice

  def as_dict(self) -> dict[str, Any]:
    return {"position": self.position._asdict(), "roll": list(self.roll),
            "choices": [c.as_dict() for c in self.choices],
            "farkle": self.farkle,
            "decision": self.decision and self.decision.as_dict()}


def _ranked(choices: list[Choice]) -> tuple[Choice, ...]:
  """Best first: win probability, then points, then dice kept."""
  return tuple(sorted(choices,
                      key=lambda c: (-c.win, -c.points, -len(c.kept))))


class SolvedGame:
  """The queries of one solved run."""

  def __init__(self, run: results.Run, label: str):
    self.run = run
    self.label = label                    # where the values came from
    self.layout: StateLayout = run.layout
    self.rules = run.layout.rules
    self.turns = queries.Turns(run.w0, run.layout, run.roll)
    self._padded = self.turns.padded
    self.check = positions.PositionCheck(run.layout, run.roll)

  def __repr__(self) -> str:
    return (f"SolvedGame({self.label!r}, players=2, goal={self.rules.goal}, "
            f"rules={self.rules.name!r}, keys={self.run.w0.size})")

  @classmethod
  def load(cls, workdir: str, allow_unconverged: bool = False
           ) -> "SolvedGame":
    """The finished run in `workdir` (results.ResultsError if none)."""
    return cls(results.load(workdir, allow_unconverged), workdir)

  @classmethod
  def shipped(cls, name: str = "facebook") -> "SolvedGame":
    """SolvedGame values that ship with the package, by config name."""
    if name not in SHIPPED:
      raise PositionError(f"no shipped values named {name!r}: one of "
                          f"{', '.join(SHIPPED)} (or a solved --workdir)")
    return cls(results.load(os.path.join(DATA, name)), f"shipped:{name}")

  @classmethod
  def open(cls, workdir: str | None, shipped: str = "facebook",
           allow_unconverged: bool = False) -> "SolvedGame":
    """The run in `workdir` if one is given, else the shipped values."""
    if workdir:
      return cls.load(workdir, allow_unconverged)
    return cls.shipped(shipped)

  # Reading positions.
  def _key(self, p: Position) -> tuple[int, int, int]:
    """(flat key, banked-score index, turn row) of a valid position (n a
    dice state of the mover's; `as_given` reads 6 as the whole hand)."""
    lay = self.layout
    positions.check_counts(self.rules, (p.f, p.e), ("f", "e"))
    try:
      bi = lay.index_of(p.b, "b", p.b_on)
      di = lay.index_of(p.d, "d", p.d_on)
    except ValueError as e:
      raise PositionError(str(e)) from None
    n = self.check.dice_state(p.f, p.n, given=False)
    t = self.check.turn_total(bi, p.f, p.t, n)
    return int(lay.key_index(bi, di, p.f, p.e)), bi, t

  def bank_minimum(self, b: int, on_board: bool | None = None) -> int:
    """Smallest turn total a player with banked score b may bank (points):
    the entry minimum while not on the board, else the bank minimum."""
    try:
      index = self.layout.index_of(b, "b", on_board)
    except ValueError as e:
      raise PositionError(str(e)) from None
    return int(self.layout.bank_floor(index) * self.layout.unit)

  def as_given(self, p: Position) -> Position:
    """Where the dice differ, n = 6 stands for the mover's whole hand."""
    positions.check_counts(self.rules, (p.f, p.e), ("f", "e"))
    return p._replace(n=self.check.dice_state(p.f, p.n))

  def win_probability(self, p: Position) -> float:
    """W of the player to move at position `p`, both playing optimally."""
    p = self.as_given(p)
    key, _, t = self._key(p)
    if t == 0 and p.n == int(self.layout.start_state(p.f)):
      # The start of a turn: the solved value itself, not its rebuild
      # (which may differ from it in the last bits).
      return float(self.run.w0.reshape(-1)[key])
    return float(self.turns.of(key).value[t, p.n - 1])

  def first_player_win(self) -> float:
    """W of the first player at the start of a game from 0 to 0."""
    return float(self.run.w0[self.layout.opening_key()])

  def decision(self, p: Position) -> Decision:
    """Bank or roll at position `p`, with both win probabilities."""
    p = self.as_given(p)
    key, _, t = self._key(p)
    return self._decision(key, t, p.n)

  def _decision(self, key: int, t: int, n: int) -> Decision:
    lay = self.layout
    fields = lay.key_fields(np.array([key]))
    if t > lay.t_max(fields[0][0]):
      return Decision(1.0, None, "bank")
    roll = float(self.turns.of(key).roll[t, n - 1])
    bust = float(self.turns.busts(key).roll[t, n - 1])
    if t < lay.bank_floor(fields[0][0]):
      return Decision(None, roll, "roll", bust)
    bank = float(lay.bank_values(self._padded, fields, t + 1)[0, t])
    return Decision(bank, roll, "bank" if bank >= roll else "roll", bust)

  def advise(self, p: Position, roll: Sequence,
             dice_state: bool = False) -> Advice:
    """Every way to set dice aside from `roll` (faces 1..6 of p.n dice, or
    where the dice differ 'A1'-style faces of the mover's dice left, which
    give p.n unless `dice_state` says they must be those of state p.n),
    best first, and bank or roll after the best one."""
    positions.check_counts(self.rules, (p.f, p.e), ("f", "e"))
    n, roll, hand = self.check.roll_of(
        p.f, roll, p.n if dice_state or self.rules.dice_alike else None)
    p = p._replace(n=n)
    key, bi, _ = self._key(p)
    lay, values = self.layout, self.turns.of(key).value
    busts, top = self.turns.busts(key).bust, int(lay.t_max(bi))

    def worth(t2: int, n2: int) -> tuple[float, bool, float]:
      u = t2 // lay.unit
      if u > top:
        return 1.0, True, 0.0
      return float(values[u, n2 - 1]), False, float(busts[u, n2 - 1])

    choices = (self._choices(roll, p.n, p.t, worth) if self.rules.dice_alike
               else _ranked([Choice(kept, pts, p.t + pts, n2,
                                    *worth(p.t + pts, n2))
                             for kept, pts, n2 in hand_rolls.options(
                                 self.rules, hand)]))
    if not choices:
      return Advice(p, roll, (), self._after_farkle(key), None)
    best = choices[0]
    return Advice(p, roll, tuple(choices), None,
                  self._decision(key, best.t // lay.unit, best.n))

  def advise_last_turn(self, b: int, bar: int, t: int, n: int,
                       roll: Sequence[int], on_board: bool | None = None
                       ) -> Advice:
    """The final round's last turn (rules.final_round): every way to set
    dice aside, best first, with the chance to finish above `bar` (points)
    from banked score b, rolling on until then (`game.final_round`)."""
    n, roll, _ = self.check.roll_of(0, roll, n)
    unit = self.layout.unit
    least = self.bank_minimum(b, on_board)
    need = max(bar - b + unit, least)
    tie = self.rules.ties_shared and bar - b >= least

    def worth(t2: int, n2: int) -> tuple[float, bool]:
      rest = (need - t2) // unit
      return final_round.chance(self.rules, rest, n2, tie), rest <= 0

    choices = self._choices(roll, n, t, worth)
    return Advice(Position(b, bar, t=t, n=n), roll, tuple(choices),
                  None if choices else 0.0, None)

  def _choices(self, roll: tuple[int, ...], n: int, t: int,
               worth: Callable[[int, int], tuple[float, bool]]
               ) -> tuple[Choice, ...]:
    """Every legal way to set dice aside from `roll` (n dice) at turn total
    t (points), best first; `worth(t2, n2)` is (win probability, whether it
    wins now[, chance to farkle]) of the state a choice leads to."""
    counts = tuple(roll.count(face) for face in range(1, 7))
    choices = []
    for kept, points in scoring.keeps(self.rules, counts):
      n2 = roll_tables.next_dice(n, sum(kept))
      faces = tuple(f for f in range(6, 0, -1) for _ in range(kept[f - 1]))
      choices.append(Choice(faces, points, t + points, n2,
                            *worth(t + points, n2)))
    return _ranked(choices)

  def _after_farkle(self, key: int) -> float:
    """W of the player who farkled: 1 - W0 of the opponent's next key."""
    lay = self.layout
    nxt = lay.farkle_index(lay.key_fields(np.array([key])))
    return float(1 - self.run.w0.reshape(-1)[nxt[0]])

  def dice_words(self, n: int | None = None) -> str:
    """Dice state n in words ('2 dice', or 'dice ABBBB' where the dice
    differ, `dice.labels`); without n, every state of the hands."""
    if n is None:
      return ", ".join(f"{i} = {x}" for i, x in enumerate(
          self.layout.dice_labels, start=1))
    label = self.dice_label(n)
    return dice_count(int(label)) if label.isdigit() else f"dice {label}"

  def dice_label(self, n: int) -> str:
    """Dice state n in a few letters ('5'; 'ABBBB' where the dice differ;
    under rules.hands, of the mover's hand)."""
    return self.layout.dice_labels[n - 1].split(":")[-1]

  # The seat-shaped queries every solved game answers (`SeatGame` too):
  # scores and farkle counts in turn order from the player to move, every
  # value a vector of each player's win probability, mover first.
  @property
  def players(self) -> int:
    return 2

  def _at(self, scores: Sequence[int], counts: Sequence[int] | None,
          t: int = 0, n: int = N_DICE) -> Position:
    # Under rules.hands the fields are the hands: player 1's moves first.
    f, e = positions.check_players(self.rules, scores, counts)
    return self.as_given(Position(int(scores[0]), int(scores[1]), f, e, t, n))

  def win_probabilities(self, scores: Sequence[int],
                        counts: Sequence[int] | None = None) -> np.ndarray:
    """[2] both players' win probabilities at the start of the mover's
    turn."""
    w = self.win_probability(self._at(scores, counts))
    return np.array([w, 1.0 - w])

  def advice(self, scores: Sequence[int], t: int = 0, n: int | None = None,
             roll: Sequence[int] | None = None,
             counts: Sequence[int] | None = None) -> dict[str, Any]:
    """`advise` or `decision` as data, shaped as `SeatGame.advice`: with a
    roll, every way to set its dice aside, best first, and bank or roll
    after the best one ("then"; absent when it wins); without, bank or roll
    at turn total t with n dice. n None: 6 (the whole hand), or with a roll
    the dice it shows; given with a roll, the roll must be of those dice."""
    pair = lambda w: None if w is None else [w, 1.0 - w]
    head = {"scores": list(scores), "t": t}
    if roll is None:
      n = N_DICE if n is None else n
      dec = self.decision(self._at(scores, counts, t, n))
      return {**head, "n": n, "best": dec.best, "bank": pair(dec.bank),
              "roll": pair(dec.roll), "bust": dec.bust}
    given = n is not None
    if not given:   # the roll's own size (where the dice differ, its state)
      n = (len(roll) if self.rules.dice_alike and 1 <= len(roll) <= N_DICE
           else N_DICE)
    adv = self.advise(self._at(scores, counts, t, n), roll, dice_state=given)
    out = {**head, "dice": list(adv.roll), "choices": [
        {**c.as_dict(), "win": pair(c.win)} for c in adv.choices]}
    if not self.rules.dice_alike:    # the dice left, by letter
      for c in out["choices"]:
        c["left"] = self.dice_label(c["n"])
    if adv.choices and not adv.choices[0].wins_now:
      best, dec = adv.choices[0], adv.decision
      out["then"] = {"t": best.t, "n": best.n, "best": dec.best,
                     "bank": pair(dec.bank), "roll": pair(dec.roll),
                     "bust": dec.bust}
    return out

  @property
  def summary(self) -> dict[str, Any]:
    """The run's summary (rules, convergence, checksums)."""
    return self.run.summary

  def table(self, scores: Sequence[int], counts: Sequence[int] | None = None,
            t_last: int | None = None) -> dict[str, Any]:
    """The mover's turn table shaped as `SeatGame.table`: rows t (points)
    from 0 to `t_last` (default: until every dice count banks), each with a
    cell per n = 6..1: bank or roll, both players' win probabilities after
    the better one, and whether any turn reaches it."""
    p = self._at(scores, counts)
    raw = self.turn_table(p.b, p.d, p.f, p.e, t_last)
    columns = list(zip(raw["states"], raw["columns"]))
    rows = [{"t": r["t"], "cells": [
        {"n": n, "action": r["action"][c], "reachable":
         n not in r["unreachable"], "win": [r["W"][c], 1.0 - r["W"][c]]}
        for n, c in columns]} for r in raw["rows"]]
    out = {"scores": list(scores), "counts": [p.f, p.e],
           "win": self.win_probabilities(scores, counts).tolist(),
           "rows": rows}
    if not self.rules.dice_alike:   # the dice states by name
      out["dice"] = {"columns": [self.dice_label(n) for n, _ in columns],
                     "legend": raw["dice"]}
    return out

  # A game in play (`strategy.match`) asks by key: (b, d, f, e) indices as
  # the player to move sees them, as `SeatGame` answers by its keys.
  def opening_key(self, scores: Sequence[int]) -> tuple[int, ...]:
    """Key of a game's first turn from banked scores (points), the first
    player's first."""
    try:
      return tuple(int(x) for x in self.layout.opening_key(*scores))
    except ValueError as e:
      raise PositionError(str(e)) from None

  def key_scores(self, key: Sequence[int]) -> tuple[int, ...]:
    """Banked points of the player to move, then of the other."""
    return tuple(int(self.layout.points(i)) for i in key[:2])

  def _position_at(self, key: Sequence[int], t: int, n: int) -> Position:
    lay, (b, d, f, e) = self.layout, key
    return Position(int(lay.points(b)), int(lay.points(d)), int(f), int(e),
                    t, n, bool(b >= lay.num_off), bool(d >= lay.num_off))

  def choices_at(self, key, t: int, n: int, dice: Sequence[int]
                 ) -> tuple[Choice, ...]:
    return self.advise(self._position_at(key, t, n), dice,
                       dice_state=True).choices

  def last_turn_choices_at(self, key, bar: int, t: int, n: int,
                           dice: Sequence[int]) -> tuple[Choice, ...]:
    """`advise_last_turn` of the mover of `key` (the final round)."""
    p = self._position_at(key, t, n)
    return self.advise_last_turn(p.b, bar, t, n, dice, p.b_on).choices

  def last_turn_decision_at(self, key, bar: int, t: int, n: int
                            ) -> Decision:
    """Bank or roll on in the mover's last turn (the final round): a bank
    only at a shared tie (a total equal to the bar: half a win); rolling
    on wins by passing the bar."""
    p = self._position_at(key, t, n)
    unit, least = self.layout.unit, self.bank_minimum(p.b, p.b_on)
    tie = self.rules.ties_shared and bar - p.b >= least
    bank = 0.5 if tie and p.b + t == bar else None
    rest = (max(bar - p.b + unit, least) - t) // unit
    roll = final_round.chance(self.rules, rest, n)
    best = "bank" if bank is not None and bank >= roll else "roll"
    return Decision(bank, roll, best)

  def decision_at(self, key, t: int, n: int) -> Decision:
    # n is a dice state here, not a count as a person gives it (`as_given`).
    flat, _, units = self._key(self._position_at(key, t, n))
    return self._decision(flat, units, n)

  def bank_minimum_at(self, key) -> int:
    p = self._position_at(key, 0, int(self.layout.start_state(key[2])))
    return self.bank_minimum(p.b, p.b_on)

  def after_bank(self, key, t: int) -> tuple[int, ...]:
    """The next player's key after banking t points short of the goal."""
    return tuple(int(x) for x in self.layout.after_bank(
        key, t // self.layout.unit))

  def after_farkle(self, key) -> tuple[int, ...]:
    """The next player's key after a farkle."""
    return tuple(int(x) for x in self.layout.farkle_fields(
        tuple(np.array(k) for k in key)))

  def turn_table(self, b: int, d: int, f: int = 0, e: int = 0,
                 t_max: int | None = None) -> dict[str, Any]:
    """The turn table of start-of-turn state (b, d, f, e) (`queries`)."""
    positions.check_t_last(self.rules, t_max)
    try:
      return queries.turn_table(self.run.w0, self.layout, self.run.roll,
                                b, d, f, e, t_max, self.turns)
    except ValueError as e:
      raise PositionError(str(e)) from None
