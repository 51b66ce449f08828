"""The catalog of named strategies, for command lines and reports
(docs/model.md §6.3).

  optimal                 win-maximizing (needs a solved run)
  maxscore                maximum expected score (wins when it can)
  memorized               play by the memorized table of `memorized`
  bank:X                  bank at turn totals >= X points
  goforit:B1,..,B6/D1,..,D6
                          maxscore, but with n dice left never bank short of
                          winning when own score >= Bn or the opponent's >= Dn
"""

from __future__ import annotations

import dataclasses

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.strategy import expected_score, go_for_it, memorized, policies

NAMES = ("optimal", "maxscore", "memorized", "bank:X",
         "goforit:B1,..,B6/D1,..,D6")


class StrategyError(ValueError):
  """A strategy name (or its parameters) that is not allowed."""


@dataclasses.dataclass
class Context:
  """What the strategies of one rule set are built from (lazily)."""
  layout: StateLayout
  roll: roll_tables.RollTables
  w0: np.ndarray | None = None     # [B, D, F, E] of a solved run
  _sol: expected_score.TurnSolution | None = None

  @property
  def sol(self) -> expected_score.TurnSolution:
    """Maximum expected score play, over at least the layout's rows."""
    if self._sol is None:
      self._sol = expected_score.solve(self.layout.rules, self.roll)
      rows = self.layout.num_rows + 1
      if self._sol.cap < rows:
        self._sol = expected_score.solve(self.layout.rules, self.roll,
                                         cap=2 * rows * self.layout.unit)
    return self._sol

  def memorized_table(self) -> memorized.MemorizedTable:
    reach = expected_score.reachable(self.roll, self.sol.cap + 1)
    return memorized.build(self.sol, reach)


def _points(text: str, name: str, unit: int, goal: int) -> tuple[int, ...]:
  try:
    vals = tuple(int(v) for v in text.split(",") if len(v) <= 24)
  except ValueError:
    vals = ()
  if len(vals) != N_DICE:
    raise StrategyError(f"{name}: expected six comma-separated point values "
                        f"(n = 1..6), got {text[:60]!r}")
  if any(not 0 <= v <= goal or v % unit for v in vals):
    raise StrategyError(f"{name}: every value a multiple of {unit} from 0 "
                        f"to the goal {goal}, got {text[:60]!r}")
  return vals


def parse_go(spec: str, unit: int, goal: int
             ) -> tuple[tuple[int, ...], tuple[int, ...]]:
  """'B1,..,B6/D1,..,D6' -> (B, D), points from 0 to the goal."""
  if spec.count("/") != 1:
    raise StrategyError(f"goforit:{spec[:60]}: expected "
                        "goforit:B1,..,B6/D1,..,D6")
  b, d = spec.split("/")
  return (_points(b, "goforit B", unit, goal),
          _points(d, "goforit D", unit, goal))


def strategy(name: str, ctx: Context) -> policies.Strategy:
  """Builds a named strategy; StrategyError lists the allowed names."""
  if name == "optimal":
    if ctx.w0 is None:
      raise StrategyError("optimal needs a solved run (--workdir)")
    return policies.optimal(ctx.w0, ctx.layout, ctx.roll)
  if name == "maxscore":
    return policies.max_score(ctx.layout, ctx.sol, "maxscore")
  if name == "memorized":
    return policies.play_memorized(ctx.layout, ctx.memorized_table())
  unit, goal = ctx.layout.unit, ctx.layout.rules.goal
  check_name(name, unit, goal)
  if name.startswith("bank:"):
    return policies.bank_at(ctx.layout, ctx.roll,
                            _bank_points(name, unit, goal))
  b, d = parse_go(name[8:], unit, goal)
  return go_for_it.go_for_it(ctx.layout, ctx.sol, b, d)


def _bank_points(name: str, unit: int, goal: int) -> int:
  try:
    x = int(name[5:]) if len(name) <= 20 else -1
  except ValueError:
    x = -1
  if not 0 < x <= goal or x % unit:
    raise StrategyError(f"{name[:40]}: X a multiple of {unit} from {unit} "
                        f"to the goal {goal}")
  return x


def check_name(name: str, unit: int, goal: int) -> None:
  """Raises StrategyError unless `name` names a strategy of the catalog
  with allowed parameters (scores of `unit` points, at most the `goal`);
  builds nothing."""
  if not isinstance(name, str) or len(name) > 200:
    raise StrategyError(f"strategy {str(name)[:40]!r}...: not a name of "
                        f"{NAMES}")
  if name in ("optimal", "maxscore", "memorized"):
    return
  if name.startswith("bank:"):
    _bank_points(name, unit, goal)
  elif name.startswith("goforit:"):
    parse_go(name[8:], unit, goal)
  else:
    raise StrategyError(f"strategy {name!r} is not allowed: one of {NAMES}")


def needs_optimal(*names: str) -> bool:
  """Whether any of the named strategies needs a solved run."""
  return "optimal" in names
