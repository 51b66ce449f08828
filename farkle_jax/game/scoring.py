"""Exact combinatorics of one roll (docs/model.md §1): combinations, scoring
choices, score sets.

A roll of n dice is a multiset, written as a count vector `c` (c[i] = number of
dice showing face i+1). A scoring choice sets aside a sub-multiset `u` of the
roll that splits completely into scoring combinations; it is worth the points
of the best such split. The *score set* of a roll is, for each number of dice
used `k`, the best points over its choices of k dice: the solver needs nothing
else when the win probability increases with the turn total.

A die with a wild face (the devil's head of Kingdom Come: Deliverance, on
its 1) adds jokers: a joker stands for any face in any combination, but
every combination holds at least one die that is not a joker, so a joker
never scores alone, nor do jokers alone (`wild_totals`).

Everything here is exact (integers and `fractions.Fraction`) and small: there
are 924 multisets of at most six dice.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction
from typing import NamedTuple

from farkle_jax.game import dice
from farkle_jax.game.rules import Rules

Counts = tuple[int, int, int, int, int, int]


def multisets(n: int) -> list[Counts]:
  """All count vectors of n dice, in a fixed order."""
  out = []
  for cut in itertools.combinations(range(n + 5), 5):
    bounds = (-1,) + cut + (n + 5,)
    out.append(tuple(bounds[i + 1] - bounds[i] - 1 for i in range(6)))
  return out


def multiplicity(c: Counts) -> int:
  """Number of ordered rolls showing the multiset `c`."""
  m = math.factorial(sum(c))
  for x in c:
    m //= math.factorial(x)
  return m


def roll_probability(rules: Rules, c: Counts) -> Fraction:
  """Exact chance that a roll of sum(c) dice alike shows the multiset `c`:
  its orderings times the chance of one ordering (`rules.dice`; fair dice
  give multiplicity / 6^n)."""
  if not rules.dice:
    return Fraction(multiplicity(c), 6 ** sum(c))
  return _chance(rules.face_chances, c)


def _chance(chances: tuple[Fraction, ...], c: Counts) -> Fraction:
  p = Fraction(multiplicity(c))
  for chance, x in zip(chances, c):
    p *= chance ** x
  return p


def _unit(face: int, count: int) -> Counts:
  c = [0] * 6
  c[face - 1] = count
  return tuple(c)


def _add(*cs: Counts) -> Counts:
  return tuple(sum(x) for x in zip(*cs))


def combinations(rules: Rules) -> list[tuple[Counts, int]]:
  """The scoring combinations of a rule set as (counts, points) pairs."""
  combos = []
  for face in range(1, 7):
    if rules.single_scores[face - 1]:
      combos.append((_unit(face, 1), rules.single_scores[face - 1]))
    triple = rules.triple_scores[face - 1]
    combos.append((_unit(face, 3), triple))
    for count in (4, 5, 6):
      if rules.n_of_a_kind == "add":
        value = triple * (count - 2)
      elif rules.n_of_a_kind == "double":
        value = triple * 2 ** (count - 3)
      elif rules.n_of_a_kind == "fixed":
        value = rules.fixed_n_of_a_kind[count - 4]
      else:
        continue
      combos.append((_unit(face, count), value))
  faces = range(1, 7)
  if rules.three_pairs:
    pick = (itertools.combinations_with_replacement
            if rules.three_pairs_repeat else itertools.combinations)
    for a, b, c in pick(faces, 3):
      combos.append((_add(_unit(a, 2), _unit(b, 2), _unit(c, 2)),
                     rules.three_pairs))
  if rules.straight:
    combos.append(((1,) * 6, rules.straight))
  low, high = rules.partial_straights
  if low:
    combos.append(((1, 1, 1, 1, 1, 0), low))
  if high:
    combos.append(((0, 1, 1, 1, 1, 1), high))
  if rules.two_triplets:
    for a, b in itertools.combinations(faces, 2):
      combos.append((_add(_unit(a, 3), _unit(b, 3)), rules.two_triplets))
  if rules.four_kind_and_pair:
    for a, b in itertools.permutations(faces, 2):
      combos.append((_add(_unit(a, 4), _unit(b, 2)), rules.four_kind_and_pair))
  return combos


def _sub(u: Counts, m: Counts) -> Counts | None:
  d = tuple(x - y for x, y in zip(u, m))
  return d if min(d) >= 0 else None


@functools.lru_cache(maxsize=None)
def _split_values(rules: Rules) -> dict[Counts, frozenset[int]]:
  """For every multiset of <= 6 dice, the point totals of its full splits."""
  return {u: split_totals(rules, u) for n in range(7) for u in multisets(n)}


@functools.lru_cache(maxsize=None)
def split_totals(rules: Rules, u: Counts) -> frozenset[int]:
  """The point totals of the full splits of dice `u` into combinations
  (empty: some die scores in none).

  Every die of a full split is in one of its combinations: the splits are
  found once each through the combination that holds a die of the lowest
  face (a query of one roll needs only its own sub-multisets).
  """
  if not any(u):
    return frozenset([0])
  low = next(k for k in range(6) if u[k])
  vals = set()
  for m, pts in _combinations_by_low(rules)[low]:
    rest = _sub(u, m)
    if rest is not None:
      vals.update(pts + v for v in split_totals(rules, rest))
  return frozenset(vals)


@functools.lru_cache(maxsize=None)
def wild_totals(rules: Rules, u: Counts, jokers: int) -> frozenset[int]:
  """The point totals of the full splits of dice `u` and `jokers` jokers
  into combinations, each combination holding at least one die of `u` and
  any jokers in place of its other dice (empty: no such split).

  As `split_totals`, each split is found through the combination that holds
  a die of the lowest face of `u`: that die's face is the combination's,
  its other dice come from `u` or are jokers.
  """
  if not jokers:
    return split_totals(rules, u)
  if not any(u):
    return frozenset()
  low = next(k for k in range(6) if u[k])
  vals = set()
  for m, pts in _combinations_by_low(rules)[low]:
    for real in itertools.product(*(
        range(1 if k == low else 0, min(u[k], m[k]) + 1) for k in range(6))):
      need = sum(m) - sum(real)
      if need <= jokers:
        vals.update(pts + v for v in wild_totals(
            rules, _sub(u, real), jokers - need))
  return frozenset(vals)


@functools.lru_cache(maxsize=None)
def _combinations_by_low(rules: Rules) -> tuple[tuple, ...]:
  """[6] for each face (0-based), the combinations holding a die of it."""
  combos = combinations(rules)
  return tuple(tuple(c for c in combos if c[0][k]) for k in range(6))


def _sub_multisets(c: Counts):
  for u in itertools.product(*(range(x + 1) for x in c)):
    if any(u):
      yield u


def choices(rules: Rules, roll: Counts) -> set[tuple[int, int]]:
  """Every legal (dice used, points) choice a roll offers (empty: farkle)."""
  out = {(sum(u), v) for u in _sub_multisets(roll)
         for v in split_totals(rules, u)}
  if not out and rules.nothing_roll and sum(roll) == 6:
    out = {(6, rules.nothing_roll)}
  return out


@functools.lru_cache(maxsize=None)
def keeps(rules: Rules, roll: Counts) -> tuple[tuple[Counts, int], ...]:
  """Every way to set dice aside from a roll, with the points it is worth
  (kept: a game asks it at every roll, of at most 924 multisets).

  Returns:
    (kept counts, points of its best split) for every sub-multiset of `roll`
    that splits completely into scoring combinations, sorted by counts;
    empty for a farkle.
  """
  out = {u: max(v) for u in _sub_multisets(roll)
         if (v := split_totals(rules, u))}
  if not out and rules.nothing_roll and sum(roll) == 6:
    out = {tuple(roll): rules.nothing_roll}
  return tuple(sorted(out.items()))


def score_set(rules: Rules, roll: Counts) -> tuple[tuple[int, int], ...]:
  """The best points for each number of dice used, sorted by dice used."""
  best: dict[int, int] = {}
  for k, pts in choices(rules, roll):
    best[k] = max(best.get(k, 0), pts)
  return tuple(sorted(best.items()))


class DiceOutcomes(NamedTuple):
  """The distinct score sets of a roll of n dice and their probabilities."""
  n: int
  farkle: Fraction                                     # P(no scoring choice)
  score_sets: tuple[tuple[tuple[int, int], ...], ...]  # [R] of ((k, pts), ...)
  probs: tuple[Fraction, ...]                          # [R]
  all_choices: frozenset[tuple[int, int]]  # every (k, pts) any roll offers


@functools.lru_cache(maxsize=None)
def outcomes(rules: Rules, n: int) -> DiceOutcomes:
  """Groups the multisets of n dice by score set, with exact probabilities.

  Rolls of probability 0 (a face a weighted die never shows) are left out,
  so that no option is offered that cannot happen."""
  weight: dict[tuple, Fraction] = {}
  farkle = Fraction(0)
  every: set[tuple[int, int]] = set()
  for roll in multisets(n):
    p = roll_probability(rules, roll)
    if not p:
      continue
    ch = choices(rules, roll)
    every |= ch
    if not ch:
      farkle += p
      continue
    key = score_set(rules, roll)
    weight[key] = weight.get(key, 0) + p
  keys = sorted(weight)
  return DiceOutcomes(n=n, farkle=farkle, score_sets=tuple(keys),
                      probs=tuple(weight[k] for k in keys),
                      all_choices=frozenset(every))


class HandOutcomes(NamedTuple):
  """The distinct option sets of a roll of the dice left of a hand whose
  dice differ (`game.dice`), with their probabilities."""
  left: tuple[int, ...]     # [K] dice left of each kind
  farkle: Fraction          # P(no scoring choice)
  option_sets: tuple[tuple[tuple[int, int], ...], ...]  # [R] ((pts, s'), ...)
  probs: tuple[Fraction, ...]                           # [R]
  all_choices: frozenset[tuple[int, int]]  # every (pts, s') any roll offers


@functools.lru_cache(maxsize=None)
def hand_outcomes(rules: Rules, left: tuple[int, ...], hand: int = 0
                  ) -> HandOutcomes:
  """Rolls the dice left (counts per kind) of hand `hand` of
  `rules.hand_specs`, each kind with its chances.

  A roll is a multiset per kind; a choice sets aside a sub-multiset of each
  whose union splits into scoring combinations. Its points depend on the
  union only; where it leads, on how many of each kind it keeps: the dice
  state s' (1..S, `dice.table_states`). Each option set keeps the best
  points per s' (the win probability grows with the turn total)."""
  kinds = dice.kinds(rules.hand_specs[hand])
  index = {c: i + 1 for i, (h, c) in enumerate(
      dice.table_states(rules.hand_specs)) if h == hand}
  rolls = [[(r, _chance(ch, r)) for r in multisets(m)]
           for ch, m in zip(kinds.chances, left)]
  weight: dict[tuple, Fraction] = {}
  farkle, every = Fraction(0), set()
  for combo in itertools.product(*rolls):
    p = math.prod(q for _, q in combo)
    if not p:
      continue
    best = _hand_options(rules, kinds, left, index,
                         tuple(r for r, _ in combo))
    every |= set(best.items())
    if not best:
      farkle += p
      continue
    key = tuple(sorted((pts, nxt) for nxt, pts in best.items()))
    weight[key] = weight.get(key, 0) + p
  keys = sorted(weight)
  return HandOutcomes(left=left, farkle=farkle, option_sets=tuple(keys),
                      probs=tuple(weight[k] for k in keys),
                      all_choices=frozenset((pts, nxt) for nxt, pts in every))


def _hand_options(rules, kinds, left, index, roll) -> dict[int, int]:
  """{s': best points} of one roll (a multiset per kind)."""
  best: dict[int, int] = {}
  for subs, points in hand_keeps(rules, roll, kinds.wild):
    nxt = index[dice.next_state(kinds.counts, left, tuple(map(sum, subs)))]
    best[nxt] = max(best.get(nxt, 0), points)
  return best


def hand_keeps(rules: Rules, roll: tuple[Counts, ...],
               wild: tuple[int, ...] = ()
               ) -> list[tuple[tuple[Counts, ...], int]]:
  """Every way to set dice aside from a roll of dice that differ (a
  multiset per kind, `dice.kinds`), with the points it is worth: (kept per
  kind, points of the best split of their union); empty for a farkle.
  `wild` [K]: each kind's wild face (0: none), whose dice kept are jokers
  (`wild_totals`)."""
  values = _split_values(rules)
  out = []
  for subs in itertools.product(*(list(_sub_multisets(r)) + [(0,) * 6]
                                  for r in roll)):
    jokers = [s[w - 1] if w else 0 for s, w in zip(subs, wild)]
    if any(jokers):
      faces = _add(*subs, *(_unit(w, -j) for w, j in zip(wild, jokers) if j))
      vals = wild_totals(rules, faces, sum(jokers))
    else:
      vals = values[_add(*subs)]
    if vals and any(map(any, subs)):
      out.append((subs, max(vals)))
  if not out and rules.nothing_roll and sum(map(sum, roll)) == dice.HAND:
    out = [(tuple(roll), rules.nothing_roll)]
  return sorted(out)
