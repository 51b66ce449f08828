"""One check of a position and a roll, for every solved game and front end.

A person gives a position as every player's banked score and farkle count
(the hand each holds under `rules.hands`), a turn total t and the dice to
roll n, and perhaps the faces rolled. Every front end (`advise`, `table`,
the terminal game, the match against the computer, each web route) asks a
solved game, and both kinds of solved game (`SolvedGame`, two players;
`SeatGame`, any number) check what they are asked here, so a position that
play never reaches, or a roll that is not of the dice to roll, is refused
with the same one line whatever the number of players or the dice:

* scores and counts: one per player, counts (hands) within the rules;
* t: a multiple of the score step, from 0, short of a total that banks the
  goal, and reachable with n dice from the start of a turn;
* n: a dice state of the mover's hand (1..6 for six dice alike);
* a roll: as many dice as are to roll, each showing a face its die can
  show; where the dice differ, a letter per die names its kind.

Every refusal is a `PositionError` (a ValueError) whose message is one line.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from farkle_jax.game import hand_rolls, roll_tables
from farkle_jax.game.layout import N_DICE, ScoreUnits
from farkle_jax.game.rules import Rules

# A request names at most this many numbers (scores, dice): more is
# refused before anything is parsed further.
MAX_ITEMS = 64


class PositionError(ValueError):
  """A position, roll or choice that is not one of the solved game's."""


def dice_count(n: int) -> str:
  """'1 die', '2 dice', ...: how every front end names dice."""
  return "1 die" if n == 1 else f"{n} dice"


def format_bust(bust: float | None) -> str:
  """A chance to end the turn in a farkle, in 4 decimals ('-' where it is
  not known)."""
  return "-" if bust is None else f"{bust:.4f}"


def parse_dice(text: str) -> tuple:
  """'6,5,3' or '6 5 3' or '653' -> (6, 5, 3); with dice that differ, each
  face after its die's letter (`dice.labels`): 'A1,B5,B3' -> ('A1', 'B5',
  'B3'); PositionError if not dice."""
  parts = text.replace(",", " ").split()[:MAX_ITEMS + 1]
  if len(parts) == 1 and len(parts[0]) > 1 and parts[0].isdigit():
    parts = list(parts[0][:MAX_ITEMS + 1])
  if len(parts) > MAX_ITEMS:
    raise PositionError(f"roll {text[:40]}...: more dice than a roll has")
  if parts and all(len(p) == 2 and p[0].isalpha() and p[1].isdigit()
                   for p in parts):
    return tuple(p.upper() for p in parts)
  try:
    faces = tuple(int(p) for p in parts if len(p) <= 3)
  except ValueError:
    faces = ()
  if not faces or len(faces) != len(parts):
    raise PositionError(f"roll {text[:40]!r}: expected the faces of the "
                        "dice, e.g. 6,5,3,3,3,2 (dice that differ: a letter "
                        "per die, e.g. A1,B5,B3)")
  return faces


def parse_scores(text: str, what: str = "scores",
                 flag: bool = True) -> tuple[int, ...]:
  """'0,500,1200' -> (0, 500, 1200); PositionError if not integers (the
  message names the flag --`what`, or with `flag` False `what` alone)."""
  parts = [x for x in text.replace(" ", "").split(",") if x]
  try:
    out = tuple(int(x) for x in parts if len(x) <= 24)
  except ValueError:
    out = ()
  if not out or len(out) != len(parts) or len(out) > MAX_ITEMS:
    given = f"--{what}={text[:40]}" if flag else f"{what} {text[:40]!r}"
    raise PositionError(f"{given}: expected integers separated by commas, "
                        "one per player in turn order from the player to "
                        "move, e.g. 0,500,1200")
  return out


def check_counts(rules: Rules, counts: Sequence[int],
                 names: Sequence[str] = ()) -> tuple[int, ...]:
  """Every player's farkle count (under `rules.hands`: the hand each
  holds), checked against the rules; `names` name the fields (f, e) of a
  two-player position."""
  allowed = rules.farkle_states
  for i, c in enumerate(counts):
    what = f"{names[i]}={c}" if i < len(names) else f"farkle count {c}"
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
      raise PositionError(f"{what}: an integer")
    if not 0 <= c < allowed:
      raise PositionError(
          f"{what}: under rules.hands this is the hand held, one of "
          f"0..{allowed - 1}" if rules.hands else
          f"{what} is not a farkle count of these rules: allowed are "
          f"0..{allowed - 1}" + ("" if rules.has_penalty else
                                 " (no farkle penalty)"))
  return tuple(int(c) for c in counts)


def check_players(rules: Rules, scores: Sequence[int],
                  counts: Sequence[int] | None) -> tuple[int, ...]:
  """Scores and counts given one per player: the counts, checked (all 0
  when None; under `rules.hands`, player i holds hand i, player 1 moving
  first)."""
  n = rules.players
  if counts is None:
    counts = tuple(range(n)) if rules.hands else (0,) * n
  if len(scores) != n or len(counts) != n:
    raise PositionError(f"scores {','.join(map(str, scores[:8]))}: expected "
                        f"{n} banked scores (and farkle counts), one per "
                        "player in turn order from the player to move")
  for s in scores:
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
      raise PositionError(f"score {s!r}: an integer number of points")
  return check_counts(rules, counts)


def check_t_last(rules: Rules, t_last: int | None,
                 name: str = "t_max") -> None:
  """The last turn total a table lists (`name`, as the caller spells it):
  from 0 to the goal."""
  if t_last is not None and not 0 <= t_last <= rules.goal:
    raise PositionError(f"{name}={str(t_last)[:24]}: a turn total from 0 to "
                        f"the goal {rules.goal}")


class PositionCheck:
  """The checks of one solved game's layout (either kind) and roll tables;
  what they need is cached, so a check costs microseconds."""

  def __init__(self, layout: ScoreUnits, roll: roll_tables.RollTables):
    self.layout, self.roll, self.rules = layout, roll, layout.rules
    # [T, S] by start state, T the most rows a turn has: a turn of any
    # t_max reaches the first t_max + 1 rows of it (totals only grow, so a
    # row is reached from rows above it alone).
    self._reach = functools.lru_cache(maxsize=None)(
        lambda start: roll_tables.reachable(roll, layout.num_rows, start))

  def dice_state(self, f: int, n: int, given: bool = True) -> int:
    """The dice state n of the mover (farkle field f); as a person gives
    it (`given`), 6 stands for the whole hand where the dice differ, else
    n is the layout's state number. PositionError if not theirs."""
    lay = self.layout
    if given and n == N_DICE and not self.rules.dice_alike:
      return int(lay.start_state(f))
    hand = lay.hand_states(f if self.rules.hands else 0)
    if n not in hand:
      what = ("the dice to roll are 1..6" if self.rules.dice_alike else
              f"the dice states of this hand are {hand[0]}..{hand[-1]} "
              f"(6: the whole hand)")
      raise PositionError(f"n={n}: {what}")
    return n

  def turn_total(self, b_index: int, f: int, t: int, n: int) -> int:
    """The turn total t (points) of the mover of score index `b_index`
    and farkle field f, with dice state n to roll, in units; refused
    unless play reaches it."""
    lay, shown = self.layout, str(t)[:24]
    top = int(lay.t_max(b_index))
    if t < 0 or t % lay.unit:
      raise PositionError(f"t={shown}: a turn total is a multiple of "
                          f"{lay.unit} from 0 to {top * lay.unit}")
    units = t // lay.unit
    if units > top:
      end = (f"the goal {self.rules.goal}" if not lay.past_goal else
             f"the final-round cap, {self.rules.final_round_cap} past the "
             f"goal {self.rules.goal}")
      raise PositionError(
          f"t={shown}: a turn total from 0 to {top * lay.unit} here: with a "
          f"banked score of {int(lay.points(b_index))}, "
          f"{(top + 1) * lay.unit} already reaches {end}; bank to win")
    if not self._reach(int(lay.start_state(f)))[units, n - 1]:
      raise PositionError(
          f"t={shown} with n={n} dice to roll cannot be reached: a turn starts "
          "at t=0 with the whole hand and each roll adds what the dice set "
          "aside score")
    return units

  def roll_of(self, f: int, roll: Sequence, n: int | None
              ) -> tuple[int, tuple, hand_rolls.HandRoll | None]:
    """A roll of the mover (farkle field f), with dice state n to roll (as
    the layout numbers them; None: the roll says it): (n, the dice, the
    hand's roll where the dice differ)."""
    text = ",".join(map(str, list(roll)[:8]))
    if not 1 <= len(roll) <= N_DICE:
      raise PositionError(f"roll {text}: 1 to 6 dice")
    if not self.rules.dice_alike:
      try:
        hand = hand_rolls.parse(self.rules, f, roll)
      except ValueError as e:
        raise PositionError(str(e)) from None
      if n is not None and hand.state != n:
        raise PositionError(f"roll {text}: these are dice "
                            f"{self._label(hand.state)}, but dice "
                            f"{self._label(n)} are to roll")
      return hand.state, hand.roll, hand
    # Six dice alike are one kind, A, as a hand of one kind is named.
    roll = tuple(int(x[1]) if isinstance(x, str) and len(x) == 2
                 and x[0] in "Aa" and x[1] in "123456" else x for x in roll)
    if any(isinstance(x, (bool, np.bool_))
           or not isinstance(x, (int, np.integer)) or not 1 <= x <= 6
           for x in roll):
      raise PositionError(f"roll {text}: faces are 1..6 (these dice are "
                          "alike: one kind, A, if lettered)")
    if n is not None and len(roll) != n:
      raise PositionError(f"roll {text}: {dice_count(len(roll))}, but n={n} "
                          "dice are to roll")
    chances = self.rules.face_chances
    never = sorted({int(x) for x in roll if not chances[int(x) - 1]})
    if never:
      raise PositionError(f"roll {text}: these dice never show "
                          f"{','.join(map(str, never))}")
    return len(roll), tuple(int(x) for x in roll), None

  def _label(self, n: int) -> str:
    labels = self.layout.dice_labels
    return labels[n - 1].split(":")[-1] if 1 <= n <= len(labels) else str(n)
