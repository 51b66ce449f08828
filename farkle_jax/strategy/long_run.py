"""Maximum long-run average score per turn, with a farkle penalty
(docs/model.md §6.7).

With a penalty for `penalty_count` farkles in a row, what a farkle costs
depends on the farkle count f at the start of the turn, so the score-
maximizing turn does too. Over many turns (scores ignored, no goal) the
farkle count is a Markov chain under per-count turn policies, and the best
average points per turn g, with relative values h (h(0) = 0), solve

    g + h(f) = max over turns of  E[points banked] + P(bank) h(0)
                                  + P(farkle) (r(f) + h(f + 1 mod K))

where r(f) = -penalty for the last count (K = penalty_count) and 0 before.
Since P(bank) = 1 - P(farkle), the turn for count f is the one-turn maximum
of `expected_score` with a farkle worth c(f) = r(f) + h(f + 1 mod K) - h(0)
points. Policy iteration over the K counts: solve those K turns, evaluate
their (mean points banked, farkle probability) exactly, solve the K linear
equations for (g, h), repeat until the policies (or h) stop changing.
Without a penalty K = 1, c = 0 and g is the one-turn maximum.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.rules import Rules
from farkle_jax.strategy import expected_score


class LongRun(NamedTuple):
  """The best per-count turns and their long-run average."""
  average: float                                  # g, points per turn
  relative: np.ndarray                            # [K] h(f), h(0) = 0
  farkle_points: np.ndarray                       # [K] c(f) of the turns
  turns: tuple[expected_score.TurnSolution, ...]  # [K] turn per count
  banked: np.ndarray                              # [K] mean points banked
  farkle_rate: np.ndarray                         # [K] P(turn farkles)
  iterations: int


def _penalties(rules: Rules) -> np.ndarray:
  """[K] r(f): the penalty where the next farkle is the last of a row."""
  r = np.zeros(rules.farkle_states)
  if rules.has_penalty:
    r[-1] = -rules.penalty
  return r


def evaluate(rules: Rules, banked: np.ndarray, farkle_rate: np.ndarray
             ) -> tuple[float, np.ndarray]:
  """(g, h) of per-count turns with these means and farkle rates.

  Solves g + h(f) = banked(f) + (1 - q(f)) h(0) + q(f) (r(f) + h(f')) with
  h(0) = 0 for the unknowns (g, h(1), .., h(K - 1)).
  """
  k = rules.farkle_states
  r, q = _penalties(rules), farkle_rate
  a = np.zeros((k, k))
  rhs = banked + q * r
  for f in range(k):
    a[f, 0] += 1.0                          # g
    if f:
      a[f, f] += 1.0                        # + h(f)
    nxt = (f + 1) % k
    if nxt:
      a[f, nxt] -= q[f]                     # - q(f) h(f')
  x = np.linalg.solve(a, rhs)
  return float(x[0]), np.concatenate([[0.0], x[1:]])


def solve(rules: Rules, roll: roll_tables.RollTables | None = None,
          max_iterations: int = 50) -> LongRun:
  """The per-count turns of maximum long-run average score."""
  roll = roll_tables.build(rules) if roll is None else roll
  k = rules.farkle_states
  r = _penalties(rules)
  h = np.zeros(k)
  policies = None
  for it in range(1, max_iterations + 1):
    c = r + np.roll(h, -1) - h[0]
    turns = tuple(expected_score.solve(rules, roll, farkle_points=float(x))
                  for x in c)
    q = np.array([t.farkle_rate() for t in turns])
    banked = np.array([t.points_per_turn() for t in turns]) - q * c
    g, new_h = evaluate(rules, banked, q)
    now = tuple(t.bank.tobytes() for t in turns)
    done = now == policies or np.max(np.abs(new_h - h)) < 1e-9
    h, policies = new_h, now
    if done:
      return LongRun(g, h, c, turns, banked, q, it)
  raise RuntimeError(f"policy iteration did not settle in {max_iterations} "
                     "rounds")
