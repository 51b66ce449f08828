"""Exact distributions of one turn's points and of the turns to a target
under a fixed turn policy (docs/model.md §6.1).

One turn: probability mass flows forward over the in-turn states (t, n)
from (0, whole hand), t in score units. At a state the policy banks (its
mass lands on t points) or rolls: a share P_farkle(n) lands on "farkle",
the rest follows each score set r (probability p_n(r)) to the state its
chosen option reaches. Turn totals only grow, so one pass over t is exact.
The policy is the one `expected_score.evaluate` evaluates, with the same
choices (its bank flags and preferences; above its cap every state banks),
so the mean of this distribution is that evaluation's mean points per turn.

The optimal play at a position (`optimal`): the policy of the solved
game's values at that key (`queries.Turns.points`, the options and
decisions the advice gives); totals that reach the goal end the turn
there (a final round, whose chaser plays on past the goal, is refused).
Its turns to a target are not given: that play depends on both
scores, which a solitaire game does not follow.

Turns to a target: a solitaire game in which every turn follows the policy
and banked points add. The score's distribution (and, with a farkle
penalty, the farkle count's) is pushed turn by turn, by convolving with the
one-turn distribution, until the target is reached.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import queries
from farkle_jax.strategy import catalog, expected_score

STRATEGIES = ("maxscore", "bank:X", "optimal")
FIXED = ("maxscore", "bank:X")   # the policies of the turns table
REACHED = 0.999           # the turns table stops once this is reached
MAX_TURNS = 100_000       # turns followed at most
TAIL = 1e-13              # unreached mass that ends the mean's sum


class Policy(NamedTuple):
  """A one-turn policy as `expected_score.evaluate` takes it."""
  name: str
  sol: expected_score.TurnSolution   # the sizes: unit, bank_min, cap
  bank: np.ndarray                    # [cap + 1, S] bool, bank at (t, n)
  prefer: np.ndarray                  # [cap + 1, S] preference of states


class TurnDistribution(NamedTuple):
  """The points one turn banks."""
  unit: int                 # points per score unit
  banked: np.ndarray        # [top + 1] float64, P(bank t units), t = index
  farkle: float             # P(the turn ends in a farkle)
  cap: int                  # units; above it every state banks
  beyond_cap: float         # P(the turn banks above the cap)

  def mean(self) -> float:
    """Mean points banked (a farkle banks 0)."""
    t = np.arange(len(self.banked)) * self.unit
    return float(self.banked @ t)


class TurnsDistribution(NamedTuple):
  """The turns a solitaire game takes to reach a target."""
  target: int               # points
  reached: np.ndarray       # [K] float64, P(reached by turn k), k = 1..K
  mean: float               # mean turns (tail past `reached` included)
  unreached: float          # P(not reached within the turns followed)
  penalty: bool             # whether the farkle penalty was applied


def check_strategy(name: str, rules: Rules) -> None:
  """Raises catalog.StrategyError (one line) unless `name` is a strategy
  this analysis follows, or if the rules give players hands of their own."""
  catalog.check_name(name, rules.step, rules.goal)
  if name not in ("maxscore", "optimal") and not name.startswith("bank:"):
    raise catalog.StrategyError(
        f"distribution: strategy {name!r} is not a fixed turn policy "
        f"here; one of {STRATEGIES}")
  if rules.hands:
    raise catalog.StrategyError(
        "distribution: not for hands of their own (rules.hands): a turn "
        "depends on whose it is")


def check_target(target: int, rules: Rules) -> None:
  """Raises catalog.StrategyError unless `target` is a positive multiple
  of the score step."""
  if not isinstance(target, int) or target <= 0 or target % rules.step:
    raise catalog.StrategyError(
        f"--target={target}: expected a positive multiple of "
        f"{rules.step} points")


def policy(name: str, rules: Rules,
           roll: roll_tables.RollTables) -> Policy:
  """The one-turn policy of a strategy of `STRATEGIES`.

  Args:
    name: "maxscore" or "bank:X" (checked by `check_strategy`).
    rules: the rule set.
    roll: its roll tables.

  Returns:
    Its bank flags and preferences, [cap + 1, S] each: the arrays that
    `policies.max_score` and `policies.bank_at` play by.
  """
  check_strategy(name, rules)
  if name == "optimal":
    raise catalog.StrategyError(f"distribution: the optimal play is a "
                                f"position's, not one of {FIXED}")
  if name == "maxscore":
    sol = expected_score.solve(rules, roll)
    return Policy(name, sol, sol.bank, sol.expected)
  x = int(name[5:])
  sol = expected_score.solve(rules, roll, bank_at=x)
  return Policy(name, sol, sol.bank, sol.expected)


def _preferences(pol: Policy, roll: roll_tables.RollTables) -> np.ndarray:
  """[top + 1, S]: the policy's preferences, and above the cap (where
  every state banks) by turn total, as `expected_score.evaluate` has."""
  cap = pol.sol.cap
  top = cap + int(roll.opt_pts.max()) + 1
  full = np.full((top + 1, roll.dice_states), np.inf)
  full[:cap + 1] = pol.prefer
  full[cap + 1:] = 1e300 + np.arange(top - cap)[:, None]
  return full


def turn(pol: Policy, roll: roll_tables.RollTables) -> TurnDistribution:
  """The exact distribution of one turn's points from the whole hand.

  Args:
    pol: the policy (`policy`).
    roll: the roll tables it was built on.

  Returns:
    P(bank t units) for t = 0 .. top and P(farkle); they sum to 1.
  """
  full = _preferences(pol, roll)
  cap, S = pol.sol.cap, roll.dice_states
  mass = np.zeros_like(full, dtype=np.float64)        # [top + 1, S]
  mass[0, S - 1] = 1.0
  banked = np.zeros(len(full))
  farkle = 0.0
  dice, nxt = roll.set_dice - 1, roll.opt_next - 1    # [R], [R, J]
  rows = np.arange(len(dice))
  stops = pol.bank & (np.arange(cap + 1) >= pol.sol.bank_min)[:, None]
  for t in range(cap + 1):
    banked[t] = mass[t] @ stops[t]
    go = np.where(stops[t], 0.0, mass[t])              # [S] rolls on
    if not go.any():
      continue
    farkle += float(go @ roll.farkle_prob)
    at = t + roll.opt_pts                              # [R, J]
    j = np.argmax(full[at, nxt], axis=1)               # first on ties
    np.add.at(mass, (at[rows, j], nxt[rows, j]), go[dice] * roll.set_prob)
  beyond = mass[cap + 1:].sum(axis=1)
  banked[cap + 1:] = beyond
  return TurnDistribution(pol.sol.unit, banked, farkle, cap,
                          float(beyond.sum()))


def optimal(turns: queries.Turns, layout: StateLayout, first: int,
            second: int) -> TurnDistribution:
  """One turn's points under the optimal play of a solved game at the
  start of a turn, no farkles yet.

  Args:
    turns: the solved game's turn values (`queries.Turns`).
    layout: its layout.
    first, second: the banked scores (points) of the player to move and
      of the opponent.

  Returns:
    The distribution; `cap` is the last total (units) short of the goal,
    and `beyond_cap` the chance that the turn banks the goal or more.
  """
  key = layout.opening_key(first, second)
  banked, farkle = turns.points(int(layout.key_index(*key)))
  reach = -(-(layout.rules.goal - first) // layout.unit)   # ceil, units
  return TurnDistribution(layout.unit, banked, farkle, reach - 1,
                          float(banked[reach:].sum()))


def turns(dist: TurnDistribution, rules: Rules, target: int,
          reach: float = REACHED, max_turns: int = MAX_TURNS
          ) -> TurnsDistribution:
  """Turns of a solitaire game from 0 to `target` points, every turn `dist`.

  With a farkle penalty (`rules.penalty` after `rules.penalty_count`
  farkles in a row, scores clamped at `rules.floor`) the farkle count is
  followed too; a bank restarts it, as does the penalty.

  Args:
    dist: the one-turn distribution.
    rules: the rules (step, penalty, floor).
    target: points to reach, a positive multiple of the step.
    reach: the table ends at the first turn where P(reached) >= reach.
    max_turns: turns followed at most.

  Returns:
    P(reached by turn k) for k = 1 .. K and the mean (the sum of
    P(not reached by turn k) over k >= 0, followed until under TAIL).
  """
  unit = dist.unit
  low = rules.low // unit if rules.has_penalty else 0
  size = target // unit - low                 # scores low .. target - 1
  count = rules.penalty_count if rules.has_penalty else 1
  state = np.zeros((count, size))             # [F, scores]
  state[0, -low] = 1.0
  done, curve, mean = 0.0, [], 0.0
  for _ in range(max_turns):
    mean += 1.0 - done
    state, gained = _one_turn(state, dist, rules)
    done += gained
    if len(curve) == 0 or curve[-1] < reach:
      curve.append(done)
    if 1.0 - done < TAIL and curve[-1] >= reach:
      break
  return TurnsDistribution(target, np.array(curve), mean, 1.0 - done,
                           rules.has_penalty)


def _one_turn(state: np.ndarray, dist: TurnDistribution, rules: Rules
              ) -> tuple[np.ndarray, float]:
  """(state after one more turn [F, scores], mass that reached the
  target during it)."""
  count, size = state.shape
  new = np.zeros_like(state)
  stay = np.convolve(state.sum(axis=0), dist.banked)   # banks restart f
  new[0] += stay[:size]
  gained = float(stay[size:].sum())
  fk = state * dist.farkle
  if rules.has_penalty:
    new[1:] += fk[:-1]
    pen = rules.penalty // dist.unit
    lost = fk[-1]                          # the farkle that costs points
    new[0, :max(size - pen, 0)] += lost[pen:]
    new[0, 0] += lost[:pen].sum()          # clamped at the floor
  else:
    new[0] += fk[0]
  return new, gained


def as_dict(name: str, dist: TurnDistribution,
            steps: TurnsDistribution | None) -> dict:
  """Both distributions as JSON-able values (points, probabilities);
  without `steps` (the optimal play) the turns' fields are None."""
  t = np.nonzero(dist.banked)[0]
  out = dict(
      strategy=name, mean_points=dist.mean(), farkle=dist.farkle,
      cap=dist.cap * dist.unit, beyond_cap=dist.beyond_cap,
      points=[dict(points=int(v) * dist.unit, p=float(dist.banked[v]))
              for v in t])
  if steps is None:
    return {**out, "target": None, "penalty_applied": None,
            "mean_turns": None, "unreached": None, "reached_by_turn": None}
  return {**out, "target": steps.target, "penalty_applied": steps.penalty,
          "mean_turns": steps.mean, "unreached": steps.unreached,
          "reached_by_turn": [float(p) for p in steps.reached]}


def format_turn(dist: TurnDistribution, shown: float = 0.9999) -> str:
  """The table points, probability, cumulative: "farkle" first, then
  banked totals until the cumulative reaches `shown`, the rest summed."""
  lines = [f"{'points':>8} {'probability':>14} {'cumulative':>14}",
           f"{'farkle':>8} {dist.farkle:14.10f} {dist.farkle:14.10f}"]
  cum = dist.farkle
  t = np.nonzero(dist.banked)[0]
  for i, v in enumerate(t):
    if cum >= shown:
      rest = dist.banked[t[i:]].sum()
      lines.append(f"{'>=' + str(int(v) * dist.unit):>8} {rest:14.10f} "
                   f"{cum + rest:14.10f}  ({len(t) - i} totals)")
      break
    cum += dist.banked[v]
    lines.append(f"{int(v) * dist.unit:8d} {dist.banked[v]:14.10f} "
                 f"{cum:14.10f}")
  return "\n".join(lines)


def format_turns(steps: TurnsDistribution) -> str:
  """The table k, P(target reached by turn k)."""
  lines = [f"{'k':>6} {'P(reached by turn k)':>22}"]
  lines += [f"{k:6d} {p:22.10f}" for k, p in enumerate(steps.reached, 1)]
  return "\n".join(lines)


def analyze(name: str, rules: Rules, target: int | None = None
            ) -> tuple[Policy, TurnDistribution, TurnsDistribution]:
  """Both distributions of a strategy (`STRATEGIES`) under `rules`, to
  `target` points (default the goal)."""
  target = rules.goal if target is None else target
  check_strategy(name, rules)
  check_target(target, rules)
  roll = roll_tables.build(rules)
  pol = policy(name, rules, roll)
  dist = turn(pol, roll)
  return pol, dist, turns(dist, rules, target)


def format_report(name: str, rules: Rules, dist: TurnDistribution,
                  steps: TurnsDistribution | None) -> str:
  """One turn's table and, for a fixed policy, the turns table, each
  under a line that says what it is."""
  unit = dist.unit
  beyond = (f", P(reaches the goal) {dist.beyond_cap:.6f}" if steps is None
            else f", P(banked above the cap {dist.cap * unit}) "
            f"{dist.beyond_cap:.3e}" if dist.beyond_cap else "")
  lines = [f"one turn, {name}, rules {rules.name}: mean {dist.mean():.6f} "
           f"points, P(farkle) {dist.farkle:.6f}{beyond}", format_turn(dist)]
  if steps is None:
    lines.append("turns to a target: for a fixed policy only "
                 f"({', '.join(FIXED)}); the optimal play depends on both "
                 "scores")
    return "\n".join(lines)
  said = (f", {rules.penalty} off at {rules.penalty_count} farkles in a "
          f"row (floor {rules.floor})" if steps.penalty
          else ", no farkle penalty")
  if rules.entry_minimum:
    said += ", entry minimum ignored"
  lines.append(f"turns alone from 0 to {steps.target}{said}: mean "
               f"{steps.mean:.6f}\n{format_turns(steps)}")
  return "\n".join(lines)
