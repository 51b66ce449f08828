"""A roll of dice that differ, as a player says it: a letter per die, the
kind of die (`dice.labels`: A, B, ... in the order of the hand's dice), and
its face, e.g. ('A1', 'B5', 'B3'). It names the dice state rolled and offers
the ways to set dice aside (docs/model.md §1, §7).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from farkle_jax.game import dice, scoring
from farkle_jax.game.rules import Rules


class HandRoll(NamedTuple):
  """A roll of the mover's dice left."""
  state: int                        # the dice state rolled (1..S)
  hand: int                         # whose hand (index into hand_specs)
  left: tuple[int, ...]             # [K] dice of each kind rolled
  faces: tuple[tuple[int, ...], ...]  # [K] counts of faces 1..6 per kind
  roll: tuple[str, ...]             # the dice, 'A1'-style, by kind


def parse(rules: Rules, f: int, roll: Sequence) -> HandRoll:
  """The roll of the mover (farkle field f: their hand under
  `rules.hands`); ValueError naming what is wrong."""
  h = f if rules.hands else 0
  kinds = dice.kinds(rules.hand_specs[h])
  letters = "".join(chr(65 + i) for i in range(len(kinds.counts)))
  faces = [[0] * 6 for _ in kinds.counts]
  for die in roll:
    text = str(die).upper()
    if len(letters) == 1 and len(text) == 1:   # dice alike: plain faces
      text = "A" + text
    if (len(text) != 2 or text[0] not in letters or text[1] not in "123456"):
      raise ValueError(f"roll {','.join(map(str, roll))}: each die is its "
                       f"letter ({', '.join(letters)}: "
                       f"{dice.legend(rules.hand_specs[h])}) and its face "
                       "1..6, e.g. A1")
    k, face = ord(text[0]) - 65, int(text[1])
    if not kinds.chances[k][face - 1]:
      raise ValueError(f"roll {','.join(map(str, roll))}: die {text[0]} "
                       f"never shows {face}")
    faces[k][face - 1] += 1
  left = tuple(sum(x) for x in faces)
  if any(a > m for a, m in zip(left, kinds.counts)) or not any(left):
    raise ValueError(f"roll {','.join(map(str, roll))}: the hand has "
                     + ", ".join(f"{m} of {chr(65 + k)}"
                                 for k, m in enumerate(kinds.counts)))
  ordered = _named(faces, len(letters) == 1)
  return HandRoll(_state_index(rules, h, left), h, left,
                  tuple(map(tuple, faces)), ordered)


def _named(faces, alike: bool) -> tuple:
  """Dice by kind, high faces first: 'A1'-style, or plain faces (ints)
  for a hand of dice alike."""
  return tuple(face if alike else f"{chr(65 + k)}{face}"
               for k, c in enumerate(faces)
               for face in range(6, 0, -1) for _ in range(c[face - 1]))


def _state_index(rules: Rules, hand: int, left: tuple[int, ...]) -> int:
  return dice.table_states(rules.hand_specs).index((hand, left)) + 1


def options(rules: Rules, roll: HandRoll
            ) -> list[tuple[tuple[str, ...], int, int]]:
  """Every way to set dice aside: (dice kept 'A1'-style, points, the dice
  state left to roll)."""
  kinds = dice.kinds(rules.hand_specs[roll.hand])
  out = []
  for subs, points in scoring.hand_keeps(rules, roll.faces, kinds.wild):
    kept = _named(subs, len(kinds.counts) == 1)
    after = dice.next_state(kinds.counts, roll.left, tuple(map(sum, subs)))
    out.append((kept, points, _state_index(rules, roll.hand, after)))
  return out
