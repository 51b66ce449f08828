"""Farkle rule sets as data (docs/model.md §1).

A `Rules` value describes one rule set completely: how dice score, when a turn
may be banked, the farkle penalty, the goal and the score floor that keeps the
state space finite. The two reference rule sets of the model (`facebook` and
`minimal`) are presets; the variants people play are the same object with other
field values, never other code paths.

All scores are in points; they must be multiples of `step` (50 by default).
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction
from typing import Any, Mapping

from farkle_jax.game import dice as dice_lib

N_OF_A_KIND_MODES = ("none", "add", "double", "fixed")


# Rules added after the first solved runs, and their "off" values.
OPTIONAL = {"entry_minimum": 0, "final_round": False,
            "final_round_cap": 4000, "final_round_ties": "leader",
            "players": 2, "dice": (), "partial_straights": (0, 0),
            "hands": (), "three_pairs_repeat": False}
MAX_PLAYERS = 6
# The model's range, checked before any arithmetic: every points field within
# MAX_POINTS, and at most MAX_SCORES banked scores a player (whatever fits in
# memory is far fewer; these keep even the memory estimate instant).
MAX_POINTS = 10**9
MAX_SCORES = 10**6
MAX_COUNT = 100     # farkles in a row that cost the penalty


class RulesError(ValueError):
  """A rule set that cannot be solved, with the field and what is allowed."""


@dataclasses.dataclass(frozen=True)
class Rules:
  """One Farkle rule set.

  Attributes:
    name: a label for logs and checkpoints.
    goal: points a player must bank to win.
    step: the score unit; every score is a multiple of it.
    single_scores: points of a single die, by face 1..6 (0 = does not score).
    triple_scores: points of three of a kind, by face 1..6.
    n_of_a_kind: how four, five and six of a kind score: "none" (only
      triples score; extra dice may form other combinations), "add" (each die
      beyond three adds the triple value again), "double" (each die beyond
      three doubles the value), "fixed" (`fixed_n_of_a_kind`).
    fixed_n_of_a_kind: points of 4, 5 and 6 of a kind when `n_of_a_kind` is
      "fixed".
    three_pairs: points of three pairs (0 = not a combination): of three
      different faces, or with `three_pairs_repeat` any six dice in pairs.
    three_pairs_repeat: three pairs may repeat a face, so a four of a kind
      with a pair (2-2-2-2-3-3) and six of a kind are three pairs too (as
      in Zilch); False: three different faces only.
    straight: points of 1-2-3-4-5-6 (0 = not a combination).
    partial_straights: points of 1-2-3-4-5 and of 2-3-4-5-6 (0 = not a
      combination), as on the Kingdom Come: Deliverance sheet.
    two_triplets: points of two triples in one six-dice roll (0 = off; the
      roll still scores as two separate triples).
    four_kind_and_pair: points of four of a kind plus a pair (0 = off).
    nothing_roll: points of a six-dice roll with no scoring combination; it
      uses all six dice (0 = such a roll is a farkle).
    bank_minimum: the smallest turn total that may be banked (at least one
      step; a turn total of 0 can never be banked).
    penalty: points lost after `penalty_count` farkle turns in a row
      (0 = no penalty).
    penalty_count: farkle turns in a row that cost `penalty`.
    floor: banked scores are clamped below at this value after a penalty.
    entry_minimum: the smallest first bank, to get on the board (0 = off;
      typical 500 or 1000); afterwards `bank_minimum` applies
      (docs/model.md §1).
    final_round: when a player banks at or above the goal, each other
      player gets one last turn to finish higher (ties:
      `final_round_ties`).
    final_round_ties: with `final_round`, a tie at the end: "leader" (the
      first to reach the top total wins: a chaser must finish strictly
      higher) or "shared" (those tied at the top share the win equally,
      half each for two; a chaser may stop at a tie).
    final_round_cap: with `final_round`, how far past the goal (points) the
      model follows a leader who rolls on to raise the bar; past it the
      leader is taken to have won (the cap experiment bounds the error).
    players: players at the table, 2 to 6; with more than two each
      maximizes their own win probability (docs/model.md §8).
    dice: the hand: `()` six fair dice; six face chances (faces 1..6,
      summing to 1) for six dice alike; or up to six such six-tuples, one
      per die, the rest fair (`game.dice`, docs/model.md §1).
    hands: each player's own hand, one `dice` value per player (`()`: the
      players share `dice`); no farkle penalty, no final round (the
      farkle-count fields of the state say whose hand is whose,
      docs/model.md §1, §8).
  """

  name: str = "custom"
  goal: int = 10_000
  step: int = 50
  single_scores: tuple[int, ...] = (100, 0, 0, 0, 50, 0)
  triple_scores: tuple[int, ...] = (1000, 200, 300, 400, 500, 600)
  n_of_a_kind: str = "add"
  fixed_n_of_a_kind: tuple[int, ...] = (1000, 2000, 3000)
  three_pairs: int = 750
  three_pairs_repeat: bool = False
  straight: int = 1500
  two_triplets: int = 0
  four_kind_and_pair: int = 0
  nothing_roll: int = 0
  bank_minimum: int = 300
  penalty: int = 500
  penalty_count: int = 3
  floor: int = -2500
  entry_minimum: int = 0
  final_round: bool = False
  final_round_cap: int = 4000
  final_round_ties: str = "leader"
  players: int = 2
  dice: tuple = ()
  hands: tuple = ()
  partial_straights: tuple[int, int] = (0, 0)

  def __post_init__(self):
    validate(self)

  @property
  def has_penalty(self) -> bool:
    return self.penalty > 0

  @property
  def ties_shared(self) -> bool:
    """Whether players tied at the bar at the end of a final round share
    the win (`final_round_ties`)."""
    return self.final_round_ties == "shared"

  @property
  def farkle_states(self) -> int:
    """Values of each of the state's two farkle fields: the farkle count
    under a penalty (`penalty_count`), each player's hand under `hands`
    (their number), else 1."""
    if self.hands:
      return len(self.hands)
    return self.penalty_count if self.has_penalty else 1

  @property
  def hand_specs(self) -> tuple:
    """[H] the hands in play (`hands`, or `dice` for all players)."""
    return self.hands or (self.dice,)

  @property
  def low(self) -> int:
    """Lowest banked score a player can have."""
    return self.floor if self.has_penalty else 0

  @property
  def die_chances(self) -> tuple[tuple[Fraction, ...], ...]:
    """[6][6] the exact chances of faces 1..6 of each die of the hand."""
    return dice_lib.per_die(self.dice)

  @property
  def dice_alike(self) -> bool:
    """Whether every player rolls the same six interchangeable dice (fair
    or weighted alike): the six dice states of every solve method."""
    # A joker scores as any face: a hand with one is scored by kind.
    return (not self.hands and len(dice_lib.kinds(self.dice).counts) == 1
            and not dice_lib.has_wild(self.dice))

  @property
  def face_chances(self) -> tuple[Fraction, ...]:
    """[6] the chances of faces 1..6 of every die, for dice alike."""
    if not self.dice_alike:
      raise ValueError("the dice of this hand differ: ask die_chances")
    return self.die_chances[0]

  def to_dict(self) -> dict[str, Any]:
    """The fields as JSON-able values. Rules added later (`OPTIONAL`) are
    left out while off, so the fingerprints of runs made before them still
    match."""
    return {k: _as_lists(v) for k, v in dataclasses.asdict(self).items()
            if not (k in OPTIONAL and v == OPTIONAL[k])}

  def replace(self, **changes) -> "Rules":
    return dataclasses.replace(self, **changes)


def _as_tuples(v: Any) -> Any:
  return tuple(map(_as_tuples, v)) if isinstance(v, (list, tuple)) else v


def _as_lists(v: Any) -> Any:
  return [_as_lists(x) for x in v] if isinstance(v, tuple) else v


def _fail(field: str, value: Any, allowed: str) -> None:
  raise RulesError(f"rules.{field} = {value!r} is not allowed: {allowed}")


def _multiple(s: int, field: str, value: Any, minimum: int = 0) -> None:
  """Checks that a points field is a multiple of step `s` in range."""
  if not isinstance(value, int) or isinstance(value, bool):
    _fail(field, value, f"an integer multiple of step={s}")
  if value < minimum or value % s or value > MAX_POINTS:
    _fail(field, value, f"a multiple of step={s}, from {minimum} to "
          f"{MAX_POINTS:,}")


def _validate_score_tuples(r: Rules, multiple) -> None:
  for field in ("single_scores", "triple_scores"):
    v = getattr(r, field)
    if not isinstance(v, tuple) or len(v) != 6:
      _fail(field, v, "six scores, one per face 1..6")
    for x in v:
      multiple(field, x)
  if r.triple_scores and min(r.triple_scores) <= 0:
    _fail("triple_scores", r.triple_scores, "positive scores for every face")
  if r.n_of_a_kind not in N_OF_A_KIND_MODES:
    _fail("n_of_a_kind", r.n_of_a_kind, f"one of {N_OF_A_KIND_MODES}")
  if not isinstance(r.fixed_n_of_a_kind, tuple) or len(r.fixed_n_of_a_kind) != 3:
    _fail("fixed_n_of_a_kind", r.fixed_n_of_a_kind,
          "three scores, for four, five and six of a kind")
  for x in r.fixed_n_of_a_kind:
    multiple("fixed_n_of_a_kind", x, r.step)
  if (not isinstance(r.partial_straights, tuple)
      or len(r.partial_straights) != 2):
    _fail("partial_straights", r.partial_straights,
          "two scores, for 1-2-3-4-5 and 2-3-4-5-6 (0 = not a combination)")
  for x in r.partial_straights:
    multiple("partial_straights", x)
  _validate_dice(r)


def validate(r: Rules) -> None:
  """Checks a rule set; raises `RulesError` naming the field and what is allowed."""
  if not isinstance(r.step, int) or not 0 < r.step <= MAX_POINTS:
    _fail("step", r.step, f"a positive integer number of points, at most "
          f"{MAX_POINTS:,}")
  s = r.step
  multiple = functools.partial(_multiple, s)
  _validate_score_tuples(r, multiple)
  for field in ("three_pairs", "straight", "two_triplets",
                "four_kind_and_pair", "nothing_roll", "penalty"):
    multiple(field, getattr(r, field))
  multiple("goal", r.goal, s)
  multiple("bank_minimum", r.bank_minimum, s)
  if (not isinstance(r.penalty_count, int) or isinstance(r.penalty_count, bool)
      or not 1 <= r.penalty_count <= MAX_COUNT):
    _fail("penalty_count", r.penalty_count, f"an integer from 1 to {MAX_COUNT}")
  if (not isinstance(r.floor, int) or isinstance(r.floor, bool)
      or r.floor % s or abs(r.floor) > MAX_POINTS):
    _fail("floor", r.floor, f"an integer multiple of step={s}, from "
          f"{-MAX_POINTS:,} to {MAX_POINTS:,}")
  if r.has_penalty and r.floor > 0:
    _fail("floor", r.floor, "at most 0 when there is a farkle penalty")
  if r.bank_minimum > r.goal:
    _fail("bank_minimum", r.bank_minimum, f"at most goal={r.goal}")
  _validate_span(r)
  _validate_entry(r)
  for flag in ("final_round", "three_pairs_repeat"):
    if not isinstance(getattr(r, flag), bool):
      _fail(flag, getattr(r, flag), "True or False")
  multiple("final_round_cap", r.final_round_cap, s)
  if r.final_round_ties not in ("leader", "shared"):
    _fail("final_round_ties", r.final_round_ties, "'leader' or 'shared'")
  if not isinstance(r.name, str) or not r.name:
    _fail("name", r.name, "a non-empty string")
  _validate_players(r)


def _validate_span(r: Rules) -> None:
  """The model's range: at most MAX_SCORES steps of banked scores, and of
  turn totals past the goal."""
  s = r.step
  if (r.goal - r.low) // s > MAX_SCORES:
    _fail("goal", r.goal, f"at most {MAX_SCORES:,} steps above the lowest "
          f"score: {r.low + MAX_SCORES * s:,} with step={s} and "
          f"floor={r.low} (a larger step or a higher floor reaches further)")
  if r.final_round_cap // s > MAX_SCORES:
    _fail("final_round_cap", r.final_round_cap,
          f"at most {MAX_SCORES:,} steps: {MAX_SCORES * s:,}")


def _validate_dice(r: Rules) -> None:
  said = dice_lib.problem(r.dice)
  if said:
    _fail("dice", r.dice, said)
  h = r.hands
  if h == ():
    _validate_wild(r)
    return
  if not isinstance(h, tuple) or len(h) != r.players:
    _fail("hands", h, f"() or one hand per player ({r.players}), each as "
          "rules.dice takes it, e.g. ((), (0.26, 0.12, 0.12, 0.12, 0.26, "
          "0.12)) for two")
  for i, spec in enumerate(h, start=1):
    said = dice_lib.problem(spec)
    if said:
      _fail("hands", h, f"hand {i}: {said}")
  _validate_wild(r)
  for field, off in (("dice", ()), ("penalty", 0), ("final_round", False)):
    if getattr(r, field) != off:
      _fail("hands", h, f"() with rules.{field}={getattr(r, field)!r} "
            f"(with hands, set rules.{field}={off!r}: the state's farkle "
            "fields hold the hands)")


def _validate_wild(r: Rules) -> None:
  """A wild face (the devil's head) only where a joker has a meaning."""
  for field in ("dice", "hands"):
    specs = r.hands if field == "hands" else (r.dice,)
    if not any(dice_lib.has_wild(spec) for spec in specs):
      continue
    if r.final_round:
      _fail(field, getattr(r, field), "dice without a wild face with "
            "rules.final_round=True (the chaser's last turn is scored on "
            "plain faces)")
    if r.nothing_roll:
      _fail(field, getattr(r, field), "dice without a wild face with "
            f"rules.nothing_roll={r.nothing_roll} (whether a roll of "
            "jokers and nothing else scores 'nothing' is not defined: the "
            "devil's head comes from a sheet without that rule)")


def _validate_players(r: Rules) -> None:
  n = r.players
  if not isinstance(n, int) or isinstance(n, bool) or not (
      2 <= n <= MAX_PLAYERS):
    _fail("players", n, f"an integer from 2 to {MAX_PLAYERS}")


def _validate_entry(r: Rules) -> None:
  e = r.entry_minimum
  if not isinstance(e, int) or isinstance(e, bool) or e < 0 or e % r.step:
    _fail("entry_minimum", e, f"0 (off) or a multiple of step={r.step}")
  if e and not r.bank_minimum <= e <= r.goal:
    _fail("entry_minimum", e, f"0 (off) or from bank_minimum="
          f"{r.bank_minimum} to goal={r.goal}")


def facebook(floor: int = -2500, goal: int = 10_000) -> Rules:
  """The Facebook Farkle rules (the headline model of the spec)."""
  return Rules(name="facebook", goal=goal, floor=floor)


def minimal(goal: int = 10_000) -> Rules:
  """The minimal rules of Busche & Neller: singles and triples only."""
  return Rules(name="minimal", goal=goal, n_of_a_kind="none", three_pairs=0,
               straight=0, bank_minimum=50, penalty=0, penalty_count=3,
               floor=0)


PRESETS = {"facebook": facebook, "minimal": minimal}

_TUPLE_FIELDS = ("single_scores", "triple_scores", "fixed_n_of_a_kind",
                 "partial_straights", "dice", "hands")


def from_mapping(m: Mapping[str, Any]) -> Rules:
  """Builds rules from a preset name plus overrides (e.g. a config dict).

  `m["preset"]` names a preset ("facebook" or "minimal"); every other key
  overrides a `Rules` field. Unknown keys are rejected.
  """
  m = dict(m)
  preset = m.pop("preset", "facebook")
  if preset not in PRESETS:
    _fail("preset", preset, f"one of {sorted(PRESETS)}")
  base = PRESETS[preset]()
  fields = {f.name for f in dataclasses.fields(Rules)}
  changes = {}
  for k, v in m.items():
    if k not in fields:
      _fail(k, v, f"not a rules field; fields are {sorted(fields)}")
    if v is None:
      continue
    if k in _TUPLE_FIELDS:
      if not isinstance(v, (list, tuple)):
        _fail(k, v, "a tuple, e.g. (100, 0, 0, 0, 50, 0)")
      v = _as_tuples(v)
    changes[k] = v
  changes.setdefault("name", preset)
  return dataclasses.replace(base, **changes)
