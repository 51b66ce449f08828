"""A hand of six dice, fair or weighted, alike or not (docs/model.md §1).

`rules.dice` names the dice: `()` is six fair dice; six numbers are the face
chances of six dice alike; a tuple of up to six such six-tuples lists the
dice one by one, and the dice it does not list are fair. In that list a die
may also be a name of the catalog (`farkle_jax/data/dice.json`: the loaded
dice of both Kingdom Come: Deliverance games, each with its sources), e.g.
("lucky", "lucky"). A die of the catalog may have a wild face (the devil's
head, in place of its 1): a joker in any combination (`scoring`), so such a
die is a kind of its own even where its chances are another's. Dice with
the same chances (and wild face) are interchangeable, so a hand is a few
*kinds* of dice with a count each, and what a turn needs to know of the
dice still to roll is how many of each kind are left: a *dice state*. Six
dice alike have the six states n = 1..6; a lucky die among five fair ones
has 2 * 6 - 1 = 11; six different dice have 63. States are numbered
1..S, the whole hand last, so that for dice alike state n is n dice.

Face chances are exact fractions: a decimal such as 0.26 is read as 13/50,
and each die's six chances are scaled to sum to exactly 1.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
from fractions import Fraction
from typing import Any, NamedTuple

HAND = 6
# per_die, kinds, states and starts are cached: the rules ask them on every
# query (`Rules.dice_alike`, the layout's start state), and reading chances
# as exact fractions costs tens of microseconds a time.
FAIR = (Fraction(1, 6),) * 6
# Face chances are read as fractions with denominators up to this.
MAX_DENOMINATOR = 10**12
ALLOWED = ("() for six fair dice; six face chances (faces 1..6, each from 0 "
           "to 1, summing to 1) for six dice alike, e.g. (0.26, 0.12, 0.12, "
           "0.12, 0.26, 0.12); or up to six such six-tuples or catalog names "
           "(farkle_jax/data/dice.json), one per die, e.g. ('lucky', "
           "'lucky') (the dice not listed are fair)")
CATALOG = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                       "dice.json")


@functools.lru_cache(maxsize=1)
def catalog() -> dict[str, dict[str, Any]]:
  """The named dice: name -> {"name", "game", "chances" (fractions as
  text), "printed", "sources", and for a die with a joker face "wild" (the
  face it replaces) and "note"}."""
  with open(CATALOG, encoding="utf-8") as f:
    return json.load(f)["dice"]


def _number(x: Any) -> bool:
  return (not isinstance(x, bool) and isinstance(x, (int, float, Fraction))
          and math.isfinite(x) and 0 <= x <= 1)


def problem(spec: Any) -> str | None:
  """What is wrong with a `rules.dice` value (None: nothing)."""
  if not isinstance(spec, tuple):
    return ALLOWED
  if spec and all(isinstance(d, (tuple, str)) for d in spec):
    if len(spec) > HAND:
      return ALLOWED + f" (a hand has {HAND} dice; {len(spec)} listed)"
    for i, die in enumerate(spec, start=1):
      said = _die_problem(die)
      if said:
        return f"{ALLOWED} (die {i}: {said})"
    return None
  said = _die_problem(spec) if spec else None
  return f"{ALLOWED} ({said})" if said else None


def _die_problem(die: tuple | str) -> str | None:
  if isinstance(die, str):
    known = catalog()
    if die not in known:
      return f"{die!r} is not in the catalog: {', '.join(sorted(known))}"
    return None
  if len(die) != 6 or not all(_number(x) for x in die):
    return "not six numbers from 0 to 1"
  if abs(sum(die) - 1) > 1e-9:
    return f"these sum to {sum(die):.12g}"
  return None


def _exact(die: tuple) -> tuple[Fraction, ...]:
  p = [Fraction(x).limit_denominator(MAX_DENOMINATOR) for x in die]
  total = sum(p)
  return tuple(x / total for x in p)


def _named(name: str) -> tuple[Fraction, ...]:
  return tuple(Fraction(x) for x in catalog()[name]["chances"])


@functools.lru_cache(maxsize=None)
def per_die(spec: tuple) -> tuple[tuple[Fraction, ...], ...]:
  """[6][6] the exact face chances of each die of the hand, in hand order."""
  if not spec:
    return (FAIR,) * HAND
  if not isinstance(spec[0], (tuple, str)):
    return (_exact(spec),) * HAND
  listed = tuple(_named(d) if isinstance(d, str) else _exact(d)
                 for d in spec)
  return listed + (FAIR,) * (HAND - len(listed))


@functools.lru_cache(maxsize=None)
def wild_faces(spec: tuple) -> tuple[int, ...]:
  """[6] each die's wild face (1..6; 0: none), in hand order."""
  if not spec or not isinstance(spec[0], (tuple, str)):
    return (0,) * HAND
  listed = tuple(int(catalog()[d].get("wild", 0)) if isinstance(d, str)
                 else 0 for d in spec)
  return listed + (0,) * (HAND - len(listed))


def has_wild(spec: tuple) -> bool:
  """Whether some die of the hand has a wild face."""
  return any(wild_faces(spec))


class Kinds(NamedTuple):
  """The hand as kinds of interchangeable dice."""
  chances: tuple[tuple[Fraction, ...], ...]  # [K][6] face chances of a kind
  counts: tuple[int, ...]                    # [K] dice of each kind
  first: tuple[int, ...]                     # [K] its first die (0-based)
  wild: tuple[int, ...]                      # [K] its wild face (0: none)


def _faces_of_dice(spec: tuple) -> tuple:
  """[6] (face chances, wild face) of each die: what makes dice a kind."""
  return tuple(zip(per_die(spec), wild_faces(spec)))


@functools.lru_cache(maxsize=None)
def kinds(spec: tuple) -> Kinds:
  """Groups the dice of a hand by their chances and wild face, in order of
  first die."""
  dice = _faces_of_dice(spec)
  order = list(dict.fromkeys(dice))
  return Kinds(chances=tuple(c for c, _ in order),
               counts=tuple(dice.count(c) for c in order),
               first=tuple(dice.index(c) for c in order),
               wild=tuple(w for _, w in order))


@functools.lru_cache(maxsize=None)
def states(counts: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
  """[S] the dice left of each kind, by number of dice, the whole hand
  last (for one kind: (1,), (2,), ..., (6,))."""
  every = [c for c in itertools.product(*(range(m + 1) for m in counts))
           if any(c)]
  return tuple(sorted(every, key=lambda c: (sum(c), c)))


def next_state(counts: tuple[int, ...], left: tuple[int, ...],
               kept: tuple[int, ...]) -> tuple[int, ...]:
  """Dice left after setting `kept` aside: the whole hand again after hot
  dice."""
  after = tuple(a - k for a, k in zip(left, kept))
  return counts if not any(after) else after


@functools.lru_cache(maxsize=None)
def labels(spec: tuple) -> tuple[str, ...]:
  """[S] each dice state in a few letters: '1'..'6' for dice alike; else a
  letter per die left, one letter per kind (`legend`), e.g. 'ABBBBB' for
  the whole hand of a lucky die (A) and five fair ones (B)."""
  k = kinds(spec)
  if len(k.counts) == 1 and not k.wild[0]:
    return tuple(str(c[0]) for c in states(k.counts))
  return tuple("".join(chr(65 + i) * c for i, c in enumerate(left))
               for left in states(k.counts))


def legend(spec: tuple) -> str:
  """What each letter of `labels` stands for, e.g. 'A = die 1 (1: 0.26,
  2: 0.12, ...), B = dice 2-6 (fair)'."""
  k = kinds(spec)
  if len(k.counts) == 1 and not k.wild[0]:
    return "six dice alike, " + _odds(k.chances[0]) + "; n = dice left"
  dice = _faces_of_dice(spec)
  parts = []
  for i, ch in enumerate(k.chances):
    which = [j + 1 for j, d in enumerate(dice) if d == (ch, k.wild[i])]
    name = (f"die {which[0]}" if len(which) == 1 else "dice " + ", ".join(
        map(str, which)))
    named = spec[k.first[i]] if (isinstance(spec[0], (tuple, str))
                                 and k.first[i] < len(spec)) else None
    odds = (f"{named}: {_odds(ch)}" if isinstance(named, str)
            else _odds(ch))
    if k.wild[i]:
      odds += f"; its {k.wild[i]} is a devil's head, a joker"
    parts.append(f"{chr(65 + i)} = {name} ({odds})")
  return "; ".join(parts)


def _odds(chances: tuple[Fraction, ...]) -> str:
  return "fair" if chances == FAIR else ", ".join(
      f"{f}: {float(p):.4g}" for f, p in enumerate(chances, start=1))


# The hands of a game: one for every player (`rules.hands`), or `rules.dice`
# for all. Their dice states are numbered one after the other: hand h has
# states offset[h] + 1 .. offset[h] + S_h, its whole hand the last of them.
@functools.lru_cache(maxsize=None)
def table_states(specs: tuple) -> tuple[tuple[int, tuple[int, ...]], ...]:
  """[S] (hand, dice left of each kind) of every dice state of `specs`."""
  return tuple((h, c) for h, spec in enumerate(specs)
               for c in states(kinds(spec).counts))


@functools.lru_cache(maxsize=None)
def starts(specs: tuple) -> tuple[int, ...]:
  """[H] the dice state (1..S) of each hand's whole hand."""
  out, offset = [], 0
  for spec in specs:
    offset += len(states(kinds(spec).counts))
    out.append(offset)
  return tuple(out)


def table_labels(specs: tuple) -> tuple[str, ...]:
  """[S] `labels` of every dice state, with the hand's player in front
  ('2:ABBBBB') where the players' hands differ."""
  if len(specs) == 1:
    return labels(specs[0])
  return tuple(f"{h + 1}:{x}" for h, spec in enumerate(specs)
               for x in labels(spec))
