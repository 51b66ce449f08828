"""The figures of a rule set's strategy analysis, computed once for every
consumer: the `analyze` command line and the strategy report of
`experiments/` call these functions and only format what they return.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.strategy import catalog, evaluation, expected_score
from farkle_jax.strategy import long_run, memorized, simulation


class MaxScore(NamedTuple):
  """Maximum expected score play of one turn."""
  sol: expected_score.TurnSolution
  reach: np.ndarray  # [cap + 1, 6] bool: reachable from (0, 6)
  # n -> (smallest t that banks, larger totals where rolling is optimal again)
  thresholds: dict[int, tuple[int | None, list[int]]]
  long_run: long_run.LongRun   # the best per-count turns with the penalty
  # per farkle count f: n -> (smallest t that banks, totals rolling again)
  long_run_thresholds: tuple[dict[int, tuple[int | None, list[int]]], ...]

  def as_dict(self) -> dict:
    lr = self.long_run
    return dict(points_per_turn=self.sol.points_per_turn(),
                farkle_rate=self.sol.farkle_rate(),
                bank_from={n: th[0] for n, th in self.thresholds.items()},
                roll_again={n: th[1] for n, th in self.thresholds.items()},
                long_run=dict(
                    points_per_turn=lr.average,
                    relative_values=lr.relative.tolist(),
                    farkle_worth=lr.farkle_points.tolist(),
                    banked=lr.banked.tolist(), farkle_rate=lr.farkle_rate.tolist(),
                    bank_from=[{n: th[0] for n, th in per.items()}
                               for per in self.long_run_thresholds]))


def max_score(ctx: catalog.Context) -> MaxScore:
  sol = ctx.sol
  reach = expected_score.reachable(ctx.roll, sol.cap + 1)
  best = long_run.solve(ctx.layout.rules, ctx.roll)
  per_count = tuple(expected_score.thresholds(
      t, expected_score.reachable(ctx.roll, t.cap + 1)) for t in best.turns)
  return MaxScore(sol, reach, expected_score.thresholds(sol, reach), best,
                  per_count)


class Memorized(NamedTuple):
  """The memorized table and how its play departs from max-score play."""
  table: memorized.MemorizedTable
  departures: memorized.Departures

  def as_dict(self) -> dict:
    return dict(table={n + 1: p for n, p in enumerate(self.table.points)},
                **self.departures._asdict())


def memorized_play(ctx: catalog.Context) -> Memorized:
  table = ctx.memorized_table()
  return Memorized(table, memorized.departures(ctx.sol, table, ctx.roll))


def against(ctx: catalog.Context, names: list[str], opponent: str,
            start: tuple[int, int] = (0, 0)
            ) -> dict[str, evaluation.Result]:
  """Exact results of each named strategy against one opponent (whose turn
  outcomes are computed once)."""
  opp = catalog.strategy(opponent, ctx)
  out_opp = evaluation.turn_outcomes(opp, ctx.layout, ctx.roll)
  res = {}
  for name in names:
    a = opp if name == opponent else catalog.strategy(name, ctx)
    out = out_opp if a is opp else evaluation.turn_outcomes(a, ctx.layout,
                                                            ctx.roll)
    res[name] = evaluation.evaluate_outcomes(
        out, a.class_of_key, out_opp, opp.class_of_key, ctx.layout, start)
  return res


class Compared(NamedTuple):
  """A simulated win rate beside its exact value."""
  role: str          # first, second or overall
  simulated: float
  se: float
  exact: float

  @property
  def z(self) -> float:
    return (self.simulated - self.exact) / self.se


def compare(est: simulation.Estimate, exact: evaluation.Result
            ) -> list[Compared]:
  """Simulated against exact, as first player, second player, overall."""
  return [Compared("first", est.first, est.first_se, exact.first),
          Compared("second", est.second, est.second_se, exact.second),
          Compared("overall", est.overall, est.overall_se, exact.overall)]
