"""A solved game of N players in a player's hands (docs/model.md §8).

`SeatGame.load(workdir)` reads a finished N-player run (its start vectors
only) and answers, for any position given as every player's banked score in
turn order from the player to move: each player's win probability, bank or
roll with both value vectors, the ranked ways to set dice aside from a roll,
the turn table, and the smallest turn total each number of dice banks at.
Turns are rebuilt by the solver's own turn pass (`solver.vector_pass`).
"""

from __future__ import annotations

import collections
import json
import os
from typing import Any, NamedTuple, Sequence

import jax.numpy as jnp
import numpy as np

from farkle_jax.game import dice as dice_lib
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import N_DICE
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, integrity, results
from farkle_jax.strategy import last_turn_play, positions, seat_turns
from farkle_jax.strategy.positions import (PositionError, dice_count,
                                           format_bust)
from farkle_jax.strategy.solved_game import Choice, Decision


class SeatChoice(NamedTuple):
  """One way to set dice aside, and what it leads to."""
  kept: tuple[int, ...]   # faces set aside, high first
  points: int             # their points
  t: int                  # turn total after it (points)
  n: int                  # dice to roll next
  win: tuple[float, ...]  # every player's win probability (mover first)
  bust: float | None = None  # the chance that the turn ends in a farkle
                             #   from there (0 where it banks or wins)


def is_seats_run(workdir: str | None) -> bool:
  """Whether `workdir` holds a finished run of the seat engine (more than
  two players, or two with `solver.method = "seats"`)."""
  try:
    with open(os.path.join(workdir or "", "summary.json")) as f:
      return "seat_win" in json.load(f)
  except (OSError, ValueError, AttributeError):
    return False


class SeatGame:
  """The solved start vectors of an N-player run, with queries."""

  def __init__(self, w0: np.ndarray, seats: SeatsLayout,
               summary: dict[str, Any], label: str = ""):
    self.w0, self.seats, self.summary = w0, seats, summary
    self.label = label   # where the values came from
    self.rules = seats.rules
    self.roll = roll_tables.build(self.rules)
    self._roll_arrays = bellman.roll_arrays(self.roll)
    self.check = positions.PositionCheck(seats, self.roll)
    self._flat = jnp.asarray(np.concatenate(
        [w0.reshape(-1, seats.players), np.zeros((1, seats.players))]))
    self.last_turns = last_turn_play.LastTurns(seats, self.roll,
                                               self._roll_arrays, self.check)
    self._final = self.last_turns.final_table()
    # The last TURNS turns asked for: one advice asks its key's turn twice
    # (the roll, then bank or roll after the best choice), a game its
    # mover's at every roll.
    self._turns: collections.OrderedDict[tuple, Turn] = (
        collections.OrderedDict())
    self._busts: collections.OrderedDict[tuple, np.ndarray] = (
        collections.OrderedDict())
    self._rolls = [seat_turns.RollSets.of(self.roll, n)
                   for n in range(1, self.roll.dice_states + 1)]

  @classmethod
  def load(cls, workdir: str, allow_unconverged: bool = False) -> "SeatGame":
    try:
      summary = results.read_summary(workdir)
      path = os.path.join(workdir, "start_values.npy")
      w0 = np.load(path, allow_pickle=False)
      integrity.verify_arrays({"start_values": w0}, summary["checksums"],
                              path)
    except (OSError, ValueError, TypeError) as e:
      raise results.ResultsError(
          f"--workdir={workdir}: no intact N-player run there "
          f"({str(e).splitlines()[0][:200]})") from None
    if not summary.get("converged"):
      if not allow_unconverged:
        raise results.ResultsError(
            f"--workdir={workdir}: the run did not converge; pass "
            "--allow_unconverged to read it anyway")
      results.log_unconverged(workdir, summary)
    seats = SeatsLayout(rules_lib.from_mapping(
        {"preset": "facebook", **summary["rules"]}))
    if w0.shape != seats.key_shape + (seats.players,):
      raise results.ResultsError(
          f"--workdir={workdir}: start_values.npy has shape {w0.shape}, "
          "not that of its rules")
    return cls(w0, seats, summary, workdir)

  @property
  def players(self) -> int:
    return self.seats.players

  def __repr__(self) -> str:
    # As `SolvedGame` reads: where from, then the game.
    return (f"SeatGame({self.label!r}, players={self.players}, "
            f"goal={self.rules.goal}, rules={self.rules.name!r}, "
            f"keys={self.w0.size // self.players})")

  # Positions.
  def key(self, scores: Sequence[int], counts: Sequence[int] | None = None
          ) -> tuple[int, ...]:
    """Key fields of banked scores (points, turn order from the mover)."""
    counts = positions.check_players(self.rules, scores, counts)
    try:
      fields = tuple(self.seats.index_of(s, "score") for s in scores)
    except ValueError as e:
      raise PositionError(str(e)) from None
    return fields + counts

  def win_probabilities(self, scores, counts=None) -> np.ndarray:
    """[N] each player's win probability at the start of the mover's turn."""
    return self.w0[self.key(scores, counts)].copy()

  def turn(self, scores, counts=None) -> "Turn":
    """Every in-turn value vector of a start-of-turn position."""
    return self._turn_of(self.key(scores, counts))

  def _turn_of(self, key: tuple) -> "Turn":
    """The turn of checked key fields: a recent one, or one turn pass."""
    key = tuple(int(x) for x in key)
    if key in self._turns:
      self._turns.move_to_end(key)
      return self._turns[key]
    seats = self.seats
    rows = np.asarray(seat_turns.turn_rows(self._flat, key, seats,
                                           self._roll_arrays, self._final))
    ahead = seats.from_next(self.w0[seats.farkle_fields(key)])
    turn = Turn(key, rows, np.concatenate([ahead, [1.0]]))
    turn.farkle.flags.writeable = False   # shared by every later asker
    self._turns[key] = turn
    if len(self._turns) > TURNS:
      self._turns.popitem(last=False)
    return turn

  def _options(self, turn: "Turn", t: int, n: int
               ) -> tuple["seat_turns.RollSets", np.ndarray, np.ndarray]:
    """The score sets of n dice rolled at turn total t (units), [R, J,
    N + 1] every option's value vector, and [R] the mover's best option of
    each set: the first on ties (short rows repeat their first option)."""
    sets = self._rolls[n - 1]
    o = turn.rows[np.minimum(t + sets.pts, self.seats.num_rows), sets.next]
    return sets, o, np.argmax(o[..., 0], axis=1)

  def roll_value(self, turn: "Turn", t: int, n: int) -> np.ndarray:
    """[N + 1] rolling n dice at turn total t (units), then playing on."""
    sets, o, pick = self._options(turn, t, n)
    return self._rolled(turn, n, sets, o[sets.rows, pick])

  def _rolled(self, turn: "Turn", n: int, sets: "seat_turns.RollSets",
              best: np.ndarray) -> np.ndarray:
    """[N + 1] the value of rolling n dice whose score sets take the
    options of value vectors `best` [R, N + 1]."""
    terms = np.concatenate([(self.roll.farkle_prob[n - 1] * turn.farkle)[None],
                            sets.prob * best])
    # Added one set at a time in table order (a sequential accumulate, not
    # numpy's pairwise sum), so every bit is that of the step-by-step sum.
    return np.add.accumulate(terms, axis=0)[-1]

  def bank_value(self, turn: "Turn", t: int) -> np.ndarray | None:
    """[N + 1] banking t units (None below the mover's bank floor: the
    bank minimum, or the entry minimum off the board)."""
    seats = self.seats
    s0 = turn.key[0]
    if t < seats.bank_floor(s0):
      return None
    nxt = seats.after_bank(turn.key, t)
    reach = int(nxt[seats.players - 1])
    if reach >= seats.num_scores:
      return np.append(seat_turns.bank_at_goal(self._final, seats,
                                               turn.key, reach), 0.0)
    return np.concatenate([seats.from_next(self.w0[nxt]), [0.0]])

  def busts(self, turn: "Turn") -> np.ndarray:
    """[T + 1, 6, 2] the chance that the mover's turn ends in a farkle
    from (t, n) (t in units), playing on as the values say: [..., 0] as
    the mover plays there (0 where banking is taken), [..., 1] rolling on.

    The options and decisions are those of `roll_value` and `_decision`
    (the first best option of a score set; banking on ties); totals past
    the mover's t_max win (0).
    """
    if turn.key in self._busts:
      self._busts.move_to_end(turn.key)
      return self._busts[turn.key]
    out = np.zeros(turn.rows.shape[:2] + (2,))
    top = int(self.seats.t_max(turn.key[0]))
    for t in range(top, -1, -1):
      bank = self.bank_value(turn, t)
      for n in range(1, len(self._rolls) + 1):
        sets, o, pick = self._options(turn, t, n)
        went = t + sets.pts[sets.rows, pick]                  # [R]
        after = np.where(went > top, 0.0, out[np.minimum(
            went, top), sets.next[sets.rows, pick], 0])
        out[t, n - 1, 1] = (self.roll.farkle_prob[n - 1]
                            + float(sets.prob[:, 0] @ after))
        rolled = self._rolled(turn, n, sets, o[sets.rows, pick])
        banks = bank is not None and bank[0] >= rolled[0]
        out[t, n - 1, 0] = 0.0 if banks else out[t, n - 1, 1]
    out.flags.writeable = False   # shared by every later asker
    self._busts[turn.key] = out
    if len(self._busts) > TURNS:
      self._busts.popitem(last=False)
    return out

  def _units(self, key: tuple, t: int, n: int) -> int:
    """Turn total t (points) in units, refused unless play reaches it with
    dice state n (`positions`)."""
    return self.check.turn_total(key[0], self.hand(key), t, n)

  def hand(self, key) -> int:
    """The mover's hand (under `rules.hands`: the mover's farkle field),
    as `positions.PositionCheck` takes it."""
    return int(key[self.players]) if self.rules.hands else 0

  def states(self, key) -> range:
    """The dice states (1..S) of the mover's hand."""
    return self.seats.hand_states(self.hand(key))

  def decision(self, scores, t: int, n: int, counts=None,
               given: bool = True) -> dict[str, Any]:
    """Bank or roll at turn total t (points) with n dice to roll (as a
    person gives it, `given`: 6 is the whole hand where the dice differ;
    else the dice state)."""
    key = self.key(scores, counts)
    n = self.check.dice_state(self.hand(key), n, given)
    tu = self._units(key, t, n)
    return self._decision(self._turn_of(key), tu, n)

  def _decision(self, turn: "Turn", tu: int, n: int) -> dict[str, Any]:
    roll = self.roll_value(turn, tu, n)
    bank = self.bank_value(turn, tu)
    best = "bank" if bank is not None and bank[0] >= roll[0] else "roll"
    keep = lambda v: None if v is None else [float(x) for x in v[:-1]]
    return {"best": best, "bank": keep(bank), "roll": keep(roll),
            "bust": float(self.busts(turn)[tu, n - 1, 1])}

  def advise(self, scores, t: int, dice: Sequence[int], counts=None,
             n: int | None = None) -> list[SeatChoice]:
    """Every way to set dice aside from a roll at turn total t (points),
    best for the mover first (empty: a farkle); n, if given, the dice to
    roll, which the roll must show."""
    key = self.key(scores, counts)
    n, dice, hand = self.check.roll_of(
        self.hand(key), dice, n if self.rules.dice_alike else None)
    tu = self._units(key, t, n)
    turn = self._turn_of(key)
    top, out = self.seats.num_rows, []
    busts, last = self.busts(turn), int(self.seats.t_max(key[0]))
    for faces, points, n2 in seat_turns.keeps(self.rules, n, dice, hand):
      u = tu + points // self.seats.unit
      win = turn.rows[min(u, top), n2 - 1]
      out.append(SeatChoice(faces, points, t + points, n2,
                            tuple(float(x) for x in win[:-1]),
                            0.0 if u > last else float(busts[u, n2 - 1, 0])))
    return sorted(out, key=lambda c: (-c.win[0], -c.points, -len(c.kept)))

  def advice(self, scores, t: int = 0, n: int | None = None, roll=None,
             counts=None) -> dict[str, Any]:
    """Advice as data. With a roll: every way to set its dice aside, best
    first, and bank or roll after the best one ("then"; absent when it
    wins); n, if given, must be the roll's size. Without: bank or roll at
    turn total t with n dice (default 6)."""
    head = {"scores": list(scores), "t": t}
    if roll is None:
      n = N_DICE if n is None else n
      return {**head, "n": n, **self.decision(scores, t, n, counts)}
    n, roll, _ = self.check.roll_of(   # faces, as read
        self.hand(self.key(scores, counts)), roll,
        n if self.rules.dice_alike else None)
    choices = self.advise(scores, t, roll, counts, n)
    out = {**head, "dice": list(roll),
           "choices": [c._asdict() for c in choices]}
    if choices and choices[0].t < self._wins_from(scores[0]):
      best = choices[0]
      out["then"] = {"t": best.t, "n": best.n, **self.decision(
          scores, best.t, best.n, counts, given=False)}
    return out

  def table(self, scores, counts=None, t_last: int | None = None
                 ) -> dict[str, Any]:
    """The mover's turn table as data: rows t (points) from 0 to `t_last`
    (default 3,000; at most the last total short of the goal), each with a
    cell per n = 6..1 dice: bank or roll, every player's win probability
    after the better of the two, and whether any turn reaches it."""
    positions.check_t_last(self.rules, t_last)
    turn, unit = self.turn(scores, counts), self.seats.unit
    last = min(self.seats.num_rows - 1,
               (3000 if t_last is None else t_last) // unit)
    reach = self.reachable(turn.key[0], last + 1,
                           self.seats.start_state(self.hand(turn.key)))
    rows, states = [], self.states(turn.key)[::-1]
    for t in range(last + 1):
      bank = self.bank_value(turn, t)
      cells = []
      for n in states:
        roll = self.roll_value(turn, t, n)
        banks = bank is not None and bank[0] >= roll[0]
        cells.append({"n": n, "action": "bank" if banks else "roll",
                      "reachable": bool(reach[t, n - 1]),
                      "win": [float(x) for x in (bank if banks
                                                 else roll)[:-1]]})
      rows.append({"t": t * unit, "cells": cells})
    out = {"scores": list(scores), "counts": list(turn.key[
        self.seats.players:]), "win": self.win_probabilities(
            scores, counts).tolist(), "rows": rows}
    if not self.rules.dice_alike:   # the dice states by name
      out["dice"] = {"columns": [self.dice_label(n) for n in states],
                     "legend": dice_lib.legend(
                         self.rules.hand_specs[self.hand(turn.key)])}
    return out

  def reachable(self, s0: int, rows: int, start: int | None = None
                ) -> np.ndarray:
    """[rows, S] bool: the in-turn states (t, n), t in units, that some
    rolls reach from the start of a turn (t = 0, the whole hand: dice state
    `start`, default S) of a mover at score field s0, as
    `queries.reachable` tells them for two players; play goes on only from
    totals up to the mover's t_max, but the rows past it that a roll lands
    on are reached too."""
    top = min(int(self.seats.t_max(s0)), rows - 1)
    reach = np.zeros((rows, self.roll.dice_states), bool)
    reach[:top + 1] = roll_tables.reachable(self.roll, top + 1, start)
    for t, col in zip(*np.nonzero(reach[:top + 1])):   # col: n - 1
      for pts, nxt in self.roll.reach_pts[col]:
        if top < t + pts < rows:
          reach[t + pts, nxt - 1] = True
    return reach

  # A game in play (`strategy.match`) asks by key: scores, then farkle
  # counts, as the player to move sees them (as `SolvedGame` answers).
  def opening_key(self, scores: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(x) for x in self.key(scores))

  def key_scores(self, key: Sequence[int]) -> tuple[int, ...]:
    """Banked points of every player, the player to move first."""
    return tuple(int(self.seats.points(i)) for i in key[:self.players])

  def _split(self, key) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return self.key_scores(key), tuple(key[self.players:])

  def choices_at(self, key, t: int, n: int, dice: Sequence[int]
                 ) -> tuple[Choice, ...]:
    """`advise`, each choice with the mover's win probability."""
    scores, counts = self._split(key)
    left = self._wins_from(scores[0])
    return tuple(Choice(c.kept, c.points, c.t, c.n, c.win[0], c.t >= left,
                        c.bust)
                 for c in self.advise(scores, t, dice, counts, n))

  def _wins_from(self, score: int) -> int:
    """The turn total (points) from which a bank wins outright: reaching
    the goal, or under the final round passing the cap beyond it."""
    return self.rules.goal - score + self.seats.past_goal * self.seats.unit

  def decision_at(self, key, t: int, n: int) -> Decision:
    scores, counts = self._split(key)
    d = self.decision(scores, t, n, counts, given=False)   # n: a state
    return Decision(d["bank"] and d["bank"][0], d["roll"][0], d["best"],
                    d["bust"])

  def dice_label(self, n: int) -> str:
    """Dice state n in a few letters ('5'; 'ABBBB' where the dice
    differ)."""
    return self.seats.dice_labels[n - 1].split(":")[-1]

  def dice_words(self, n: int) -> str:
    """Dice state n in words ('2 dice', or 'dice ABBBB')."""
    label = self.dice_label(n)
    return dice_count(int(label)) if label.isdigit() else f"dice {label}"

  def bank_minimum_at(self, key) -> int:
    return int(self.seats.bank_floor(key[0])) * self.seats.unit

  def after_bank(self, key, t: int) -> tuple[int, ...]:
    """The next player's key after banking t points short of the goal."""
    return tuple(int(x) for x in self.seats.after_bank(
        tuple(key), t // self.seats.unit))

  def after_farkle(self, key) -> tuple[int, ...]:
    """The next player's key after a farkle."""
    return tuple(int(x) for x in self.seats.farkle_fields(tuple(key)))

  def bank_thresholds(self, scores, counts=None) -> list[int | None]:
    """For every dice state, the whole hand first (n = 6..1 dice alike),
    the smallest turn total (points) at which the mover banks rather than
    rolls (None: never)."""
    turn = self.turn(scores, counts)
    out = []
    for n in self.states(turn.key)[::-1]:
      found = None
      for t in range(int(self.seats.bank_floor(turn.key[0])),
                     self.seats.num_rows):
        bank = self.bank_value(turn, t)
        if bank[0] >= self.roll_value(turn, t, n)[0]:
          found = t * self.seats.unit
          break
      out.append(found)
    return out


class Turn(NamedTuple):
  """The in-turn values of one start-of-turn position."""
  key: tuple            # key fields (scores, then farkle counts)
  rows: np.ndarray      # [T + 1, 6, N + 1] value vectors (channel N: farkle)
  farkle: np.ndarray    # [N + 1] what a farkle is worth, seen from the mover


# Turns kept by each SeatGame (a few tens of kB each).
TURNS = 512


def format_vector(v: Sequence[float]) -> str:
  return " ".join(f"{x:.6f}" for x in v)


LEGEND = ("W = win probability of the player to move; B = bank, otherwise "
          "roll; - = unreachable")


def format_turn_table(game, scores, counts=None,
                      t_last: int | None = None) -> str:
  """The mover's turn table of either game (`table`, by every player's
  score) as text (`format_table`)."""
  return format_table(game.table(scores, counts, t_last))


def format_table(table: dict[str, Any]) -> str:
  """A turn table by scores (`table` of either game) as text, as
  `queries.format_table` writes the two-player one: rows t, columns n =
  6..1, each cell W with 'B' after it where banking is best, '-' where no
  rolls reach; above, a legend, every player's win probability, and the
  farkle counts unless all are 0."""
  head = f"turn table scores {','.join(map(str, table['scores']))}"
  if any(table.get("counts", ())):
    head += f" counts {','.join(map(str, table['counts']))}"
  lines = [f"{head} (player to move first)  ({LEGEND})",
           f"win probabilities {format_vector(table['win'])}"]
  names = [str(c["n"]) for c in table["rows"][0]["cells"]]
  if "dice" in table:
    names = table["dice"]["columns"]
    lines.append(f"dice left, by letter: {table['dice']['legend']}")
  lines.append(f"{'t':>6} " + " ".join(f"{'n=' + n:>10}" for n in names))
  lines += [f"{row['t']:>6} " + " ".join(map(_cell, row["cells"]))
            for row in table["rows"]]
  return "\n".join(lines)


def _cell(cell: dict[str, Any]) -> str:
  """One cell of `format_table`, 10 characters."""
  if not cell.get("reachable", True):
    return f"{'-':>10}"
  return f"{cell['win'][0]:9.6f}{'B' if cell['action'] == 'bank' else ' '}"


def format_advice(game, scores, t: int, dice, counts=None,
                  n: int | None = None) -> str:
  """`advice` of either game for a roll (of n dice, if given), as text
  (every win probability a vector over the players)."""
  adv = game.advice(scores, t, n, dice, counts)
  n = game.players
  head = (f"scores {','.join(map(str, scores))} (player to move first), "
          f"turn total {t}, rolled {dice_count(len(dice))}: "
          f"{','.join(map(str, dice))}")
  if not adv["choices"]:
    return head + "\nfarkle: nothing scores; the turn ends with nothing banked"
  lines = [head, f"  {'keep':<14}{'points':>7}{'turn total':>12}"
           f"{'dice left':>11}{'bust':>8}   win probability of players "
           f"1..{n}"]
  for i, c in enumerate(adv["choices"]):
    lines.append(f"  {' '.join(map(str, c['kept'])):<14}{c['points']:>7}"
                 f"{c['t']:>12}{c['n']:>11}{format_bust(c.get('bust')):>8}"
                 f"   {format_vector(c['win'])}{'  best' if i == 0 else ''}")
  if "then" in adv:
    d = adv["then"]
    bank = format_vector(d["bank"]) if d["bank"] else "not allowed"
    lines.append(f"then, at t={d['t']} with {dice_count(d['n'])}: {d['best']} "
                 f"(bank {bank}; roll {format_vector(d['roll'])}, bust "
                 f"{format_bust(d.get('bust'))})")
  return "\n".join(lines)
