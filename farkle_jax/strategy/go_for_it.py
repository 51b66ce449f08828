"""Go-for-it play and the search for its best thresholds (docs/model.md §6.6).

Go-for-it play is maximum expected score play, except that with n dice left
the player never banks short of winning once its own score is at least B_n
or the opponent's at least D_n. Its classes are b * 64 + a 6-bit mask (bit
n - 1: go for it with n dice), so one set of turn outcomes serves every
choice of thresholds in the search.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.strategy import evaluation, expected_score, policies

MASKS = 2 ** N_DICE


def go_masks(layout: StateLayout, b_min: tuple[int, ...],
             d_min: tuple[int, ...]) -> np.ndarray:
  """[K] 6-bit masks: bit n - 1 set where, with n dice left, the player
  never banks short of winning (own score >= b_min[n-1] or the opponent's
  >= d_min[n-1], points)."""
  b, d = (layout.points(x) for x in layout.key_fields()[:2])
  mask = np.zeros(layout.num_keys, np.int32)
  for n in range(1, N_DICE + 1):
    go = (b >= b_min[n - 1]) | (d >= d_min[n - 1])
    mask |= go.astype(np.int32) << (n - 1)
  return mask


def go_for_it(layout: StateLayout, sol: expected_score.TurnSolution,
              b_min: tuple[int, ...], d_min: tuple[int, ...]
              ) -> policies.Strategy:
  """Go-for-it play with thresholds B_n = b_min[n-1], D_n = d_min[n-1].

  Raises:
    ValueError: a threshold list is not six scores >= 0 on the score step.
  """
  for name, values in (("B", b_min), ("D", d_min)):
    if (len(values) != N_DICE
        or any(v < 0 or v % layout.unit for v in values)):
      raise ValueError(f"go-for-it {name} = {tuple(values)}: expected six "
                       f"scores >= 0, multiples of {layout.unit}")
  classes = layout.key_fields()[0] * MASKS + go_masks(layout, b_min, d_min)
  return go_for_it_classes(layout, sol, classes.astype(np.int32),
                           f"go for it B={tuple(b_min)} D={tuple(d_min)}")


def go_for_it_classes(layout: StateLayout, sol: expected_score.TurnSolution,
                      class_of_key: np.ndarray, name: str
                      ) -> policies.Strategy:
  """Go-for-it strategy with classes b * 64 + mask (any masks)."""
  prefer = policies.layout_rows(layout, sol.expected)
  bank = policies.layout_rows(layout, sol.bank)
  bits = (np.arange(MASKS)[:, None] >> np.arange(N_DICE)[None, :]) & 1

  def policy(classes):
    go = bits[np.asarray(classes) % MASKS].astype(bool)      # [k, 6]
    k = len(classes)
    return (np.broadcast_to(prefer, (k,) + prefer.shape),
            bank[None] & ~go[:, None, :])

  class_b = np.repeat(np.arange(layout.num_scores, dtype=np.int32), MASKS)
  return policies.Strategy(name, class_of_key, class_b, policy)


@dataclasses.dataclass
class GoSearch:
  """Result of the go-for-it search."""
  b_min: tuple[int, ...]
  d_min: tuple[int, ...]
  result: evaluation.Result
  baseline: evaluation.Result      # maxscore (never go) against the same
  evaluations: int
  seconds: float

  @property
  def name(self) -> str:
    return (f"goforit:{','.join(map(str, self.b_min))}/"
            f"{','.join(map(str, self.d_min))}")


def search(layout: StateLayout, roll: roll_tables.RollTables,
           sol: expected_score.TurnSolution, opponent: policies.Strategy,
           coarse: int = 500, rounds: int = 4,
           log: Callable[[str], None] = logging.info) -> GoSearch:
  """Coordinate search of B_n, D_n maximizing the overall win rate of
  go-for-it play against `opponent` (exact evaluation of each candidate).

  Each parameter is scanned on a `coarse` grid from 0 to the goal (the goal
  means never), then refined in score steps around the best value; rounds
  repeat until none improves.
  """
  start = time.time()
  out_o = evaluation.turn_outcomes(opponent, layout, roll)
  b_idx = layout.key_fields()[0]
  go = go_for_it_classes(layout, sol, b_idx * MASKS, "go")
  out_g = evaluation.turn_outcomes(go, layout, roll,
                                   np.arange(layout.num_scores * MASKS))
  count = 0

  def score(params):
    nonlocal count
    count += 1
    cls = b_idx * MASKS + go_masks(layout, params[:N_DICE], params[N_DICE:])
    return evaluation.evaluate_outcomes(out_g, cls, out_o,
                                        opponent.class_of_key, layout)

  goal, unit = layout.rules.goal, layout.unit
  params = [goal] * (2 * N_DICE)
  base = score(params)
  best = base.overall
  for rnd in range(rounds):
    improved = False
    for i in range(2 * N_DICE):
      grid = list(range(0, goal + 1, coarse))
      fine = []
      for values in (grid, fine):
        for v in values:
          trial = params.copy()
          trial[i] = v
          w = score(trial).overall
          if w > best + 1e-15:
            best, params, improved = w, trial, True
        c = params[i]
        fine.extend(v for v in range(c - coarse + unit, c + coarse, unit)
                    if 0 <= v <= goal and v not in grid)
      log(f"round {rnd + 1} parameter {'BD'[i // N_DICE]}{i % N_DICE + 1}: "
          f"B={params[:N_DICE]} D={params[N_DICE:]} overall={best:.6f} "
          f"({count} evaluations, {time.time() - start:.0f} s)")
    if not improved:
      break
  return GoSearch(tuple(params[:N_DICE]), tuple(params[N_DICE:]),
                  score(params), base, count, time.time() - start)
