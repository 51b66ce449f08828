"""Strategy analysis of a rule set: named strategies, komi, go-for-it search.

Strategy names (command line and reports):

  optimal                 win-maximizing (needs a solved run)
  maxscore                maximum expected score (wins when it can)
  memorized               the breakpoint table of `memorable`
  bank:X                  bank at turn totals >= X points
  goforit:B1,..,B6/D1,..,D6
                          maxscore, but with n dice left never bank short of
                          winning when own score >= Bn or the opponent's >= Dn
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np
from absl import logging

from farkle_jax import evaluation
from farkle_jax import expected_score
from farkle_jax import memorable
from farkle_jax import strategies
from farkle_jax import tables as tables_lib
from farkle_jax.layout import N_DICE, StateLayout

NAMES = ("optimal", "maxscore", "memorized", "bank:X",
         "goforit:B1,..,B6/D1,..,D6")


class StrategyError(ValueError):
  """A strategy name that is not allowed."""


@dataclasses.dataclass
class Context:
  """What strategies of one rule set are built from (lazily)."""
  layout: StateLayout
  roll: tables_lib.RollTables
  w0: np.ndarray | None = None     # [B, D, F, E] of a solved run
  _sol: expected_score.TurnSolution | None = None

  @property
  def sol(self) -> expected_score.TurnSolution:
    if self._sol is None:
      self._sol = expected_score.solve(self.layout.rules, self.roll)
      rows = self.layout.num_rows + 1
      if self._sol.cap < rows:
        self._sol = expected_score.solve(self.layout.rules, self.roll,
                                         cap=2 * rows * self.layout.unit)
    return self._sol

  def table(self) -> memorable.Breakpoints:
    reach = expected_score.reachable(self.roll, self.sol.cap + 1)
    return memorable.build(self.sol, reach)


def _points(text: str, name: str) -> tuple[int, ...]:
  try:
    vals = tuple(int(v) for v in text.split(","))
  except ValueError:
    vals = ()
  if len(vals) != N_DICE:
    raise StrategyError(f"{name}: expected six comma-separated point values "
                        f"(n = 1..6), got {text!r}")
  return vals


def parse_go(spec: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
  """'B1,..,B6/D1,..,D6' -> (B, D)."""
  if spec.count("/") != 1:
    raise StrategyError(f"goforit:{spec}: expected goforit:B1,..,B6/D1,..,D6")
  b, d = spec.split("/")
  return _points(b, "goforit B"), _points(d, "goforit D")


def strategy(name: str, ctx: Context) -> strategies.Strategy:
  """Builds a named strategy; StrategyError lists the allowed names."""
  if name == "optimal":
    if ctx.w0 is None:
      raise StrategyError("optimal needs a solved run (--workdir)")
    return strategies.optimal(ctx.w0, ctx.layout, ctx.roll)
  if name == "maxscore":
    return strategies.max_score(ctx.layout, ctx.sol, "maxscore")
  if name == "memorized":
    return strategies.memorized(ctx.layout, ctx.table())
  if name.startswith("bank:"):
    try:
      x = int(name[5:])
    except ValueError:
      x = -1
    if x <= 0 or x % ctx.layout.unit:
      raise StrategyError(f"{name}: X must be a positive multiple of "
                          f"{ctx.layout.unit}")
    return strategies.bank_at(ctx.layout, ctx.roll, x)
  if name.startswith("goforit:"):
    b, d = parse_go(name[8:])
    return strategies.go_for_it(ctx.layout, ctx.sol, b, d)
  raise StrategyError(f"strategy {name!r} is not allowed: one of {NAMES}")


def komi(w0: np.ndarray, layout: StateLayout, k_max: int = 1000
         ) -> list[tuple[int, float]]:
  """[(k, first player's win probability when the second starts with k)]
  for k = 0 .. k_max in score steps (below the goal), both playing
  optimally (f = e = 0)."""
  zero = layout.index_of(0)
  k_max = min(k_max, layout.rules.goal - layout.unit)
  return [(k, float(w0[zero, layout.index_of(k, "k"), 0, 0]))
          for k in range(0, k_max + 1, layout.unit)]


def fairest(curve: list[tuple[int, float]]) -> tuple[int, float]:
  """The (k, W) of a komi curve closest to an even game."""
  return min(curve, key=lambda kw: abs(kw[1] - 0.5))


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


def search_go_for_it(ctx: Context, opponent: strategies.Strategy,
                     coarse: int = 500, rounds: int = 4,
                     log: Callable[[str], None] = logging.info) -> GoSearch:
  """Coordinate search of B_n, D_n maximizing the overall win rate of
  go-for-it play against `opponent` (exact evaluation of each candidate).

  Each parameter is scanned on a `coarse` grid from 0 to the goal (the goal
  means never), then refined in score steps around the best value; rounds
  repeat until none improves.
  """
  lay, roll = ctx.layout, ctx.roll
  start = time.time()
  out_o = evaluation.turn_outcomes(opponent, lay, roll)
  b_idx = np.unravel_index(np.arange(lay.num_keys), lay.key_shape)[0]
  all_classes = np.arange(lay.num_scores * 64)
  go = strategies.go_for_it_classes(lay, ctx.sol, b_idx * 64, "go")
  out_g = evaluation.turn_outcomes(go, lay, roll, all_classes)
  count = 0

  def score(b_min, d_min):
    nonlocal count
    count += 1
    cls = b_idx * 64 + strategies.go_masks(lay, b_min, d_min)
    return evaluation.evaluate_outcomes(out_g, cls, out_o,
                                        opponent.class_of_key, lay)

  goal, unit = lay.rules.goal, lay.unit
  params = [lay.rules.goal] * (2 * N_DICE)
  base = score(params[:N_DICE], params[N_DICE:])
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
          w = score(trial[:N_DICE], trial[N_DICE:]).overall
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
  result = score(params[:N_DICE], params[N_DICE:])
  return GoSearch(tuple(params[:N_DICE]), tuple(params[N_DICE:]), result,
                  base, count, time.time() - start)
