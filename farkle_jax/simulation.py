"""Vectorized Monte Carlo play of two strategies (JAX, seeded).

Every game of a batch advances one decision per step: bank, or roll (a
farkle, or a score set drawn with its exact probability, then the scoring
the strategy prefers). Half the games start with A, half with B. The games
use the same turn policies as the exact evaluator (`strategies`), so the two
can be compared within sampling error.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax import evaluation
from farkle_jax import tables as tables_lib
from farkle_jax.layout import N_DICE, StateLayout
from farkle_jax.strategies import Strategy


class Dense(NamedTuple):
  """A strategy's policy materialized for every class keys use."""
  class_of_key: np.ndarray  # [K] int32 dense class ids
  prefer: np.ndarray        # [C, T + 1, 6] float64
  bank: np.ndarray          # [C, T + 1, 6] bool


class Estimate(NamedTuple):
  """Simulated win rates of A, with standard errors."""
  games: int
  first: float
  first_se: float
  second: float
  second_se: float
  steps: int

  @property
  def overall(self) -> float:
    return 0.5 * (self.first + self.second)

  @property
  def overall_se(self) -> float:
    return 0.5 * math.hypot(self.first_se, self.second_se)


def dense(strategy: Strategy, layout: StateLayout, batch: int = 4096
          ) -> Dense:
  """Materializes a strategy's policy (one row per class its keys use)."""
  used, inverse = np.unique(strategy.class_of_key, return_inverse=True)
  rows = layout.num_rows + 1
  # float64 preferences and bool flags, and their concatenated copy.
  evaluation.refuse_if_too_big(9 * 2 * len(used) * rows * N_DICE,
                               f"the policy of {strategy.name!r}")
  prefer, bank = [], []
  for start in range(0, len(used), batch):
    p, b = strategy.policy(used[start:start + batch])
    prefer.append(np.asarray(p, np.float64))
    bank.append(np.asarray(b, bool))
  return Dense(inverse.astype(np.int32).reshape(-1), np.concatenate(prefer),
               np.concatenate(bank))


def _roll_sampler(roll: tables_lib.RollTables):
  """[6, W] cumulative probabilities and row ids (-1: farkle) per n."""
  width = max(int((roll.set_dice == n).sum()) for n in range(1, 7)) + 1
  cdf = np.ones((N_DICE, width))
  ids = np.full((N_DICE, width), -1, np.int32)
  for n in range(1, N_DICE + 1):
    rows = np.nonzero(roll.set_dice == n)[0]
    p = np.concatenate([[roll.farkle_prob[n - 1]], roll.set_prob[rows]])
    c = np.cumsum(p)
    cdf[n - 1, :len(c)] = c
    cdf[n - 1, len(c) - 1:] = 2.0   # the last outcome takes any rounding
    ids[n - 1, 1:len(c)] = rows
    ids[n - 1, len(c):] = rows[-1]
  return jnp.asarray(cdf), jnp.asarray(ids)


@functools.partial(jax.jit, static_argnames=("shape", "sizes", "max_steps"))
def _play(key, first_is_a, start, pols, roll_arrays, shape, sizes,
          max_steps):
  """Plays a batch of games to the end; returns (A won [G], steps)."""
  (cls_a, pref_a, bank_a), (cls_b, pref_b, bank_b) = pols
  cdf, ids, pts, nxt = roll_arrays
  B, D, F, E = shape
  rows, bank_min, low, goal, penalty = sizes
  T = rows - 1
  g = first_is_a.shape[0]
  mover = jnp.where(first_is_a, 0, 1)
  score = jnp.broadcast_to(start, (g, 2)).astype(jnp.int32)  # [first, second]
  zeros = jnp.zeros(g, jnp.int32)
  # Scores and farkle counts by player: index 0 = A, 1 = B.
  own = jnp.where(first_is_a[:, None], score, score[:, ::-1])
  state = dict(score=own, fk=jnp.zeros((g, 2), jnp.int32), mover=mover,
               t=zeros, n=zeros + N_DICE, done=jnp.zeros(g, bool),
               a_won=jnp.zeros(g, bool))

  def lookup(cls, pref, bank, k, t, n, t_opt, n_opt):
    c = cls[k]
    flat = pref.reshape(-1)
    p = flat[(c[:, None] * rows + jnp.minimum(t_opt, T)) * N_DICE + n_opt - 1]
    return p, bank.reshape(-1)[(c * rows + t) * N_DICE + n - 1]

  def step(carry):
    s, i = carry
    p = s["mover"]
    ar = jnp.arange(g)
    me, opp = s["score"][ar, p], s["score"][ar, 1 - p]
    fm, fo = s["fk"][ar, p], s["fk"][ar, 1 - p]
    k = ((me * D + opp) * F + fm) * E + fo
    t, n = s["t"], s["n"]
    t_max = jnp.maximum(bank_min - 1, goal - 1 - (me + low))
    u = jax.random.uniform(jax.random.fold_in(key, i), (g,))
    r = ids[n - 1, jnp.sum(u[:, None] >= cdf[n - 1], axis=1)]
    farkled = r < 0
    rr = jnp.maximum(r, 0)
    t_opt = t[:, None] + pts[rr]                               # [g, J]
    n_opt = nxt[rr]
    pa, ba = lookup(cls_a, pref_a, bank_a, k, t, n, t_opt, n_opt)
    pb, bb = lookup(cls_b, pref_b, bank_b, k, t, n, t_opt, n_opt)
    pref = jnp.where((p == 0)[:, None], pa, pb)
    banks = jnp.where(p == 0, ba, bb) & (t >= bank_min)
    pref = jnp.where(t_opt > t_max[:, None], jnp.inf, pref)
    j = jnp.argmax(pref, axis=1)
    t_new = jnp.take_along_axis(t_opt, j[:, None], 1)[:, 0]
    n_new = jnp.take_along_axis(n_opt, j[:, None], 1)[:, 0]
    wins = ~banks & ~farkled & (t_new > t_max)
    ends = banks | farkled
    penal = farkled & (fm == F - 1) & (penalty > 0)
    me_new = jnp.where(banks, me + t, jnp.where(penal, jnp.maximum(
        0, me - penalty), me))
    fm_new = jnp.where(banks, 0, jnp.where(farkled, (fm + 1) % F, fm))
    live = ~s["done"]
    upd = lambda new, old: jnp.where(live, new, old)
    score = s["score"].at[ar, p].set(upd(me_new, me))
    fk = s["fk"].at[ar, p].set(upd(fm_new, fm))
    out = dict(
        score=score, fk=fk,
        mover=upd(jnp.where(ends, 1 - p, p), p),
        t=upd(jnp.where(ends, 0, t_new), t),
        n=upd(jnp.where(ends, N_DICE, n_new), n),
        done=s["done"] | (live & wins),
        a_won=s["a_won"] | (live & wins & (p == 0)))
    return out, i + 1

  def cond(carry):
    s, i = carry
    return (i < max_steps) & ~s["done"].all()

  state, steps = jax.lax.while_loop(cond, step, (state, jnp.int32(0)))
  return state["a_won"], state["done"], steps


def simulate(a: Strategy | Dense, b: Strategy | Dense, layout: StateLayout,
             roll: tables_lib.RollTables, games: int, seed: int = 0,
             start: tuple[int, int] = (0, 0), batch: int = 2 ** 18,
             max_steps: int = 100_000) -> Estimate:
  """Plays `games` games of A against B (half with A first).

  Args:
    a, b: the strategies (or their dense policies).
    layout, roll: the rules' layout and roll tables.
    games: number of games (even).
    seed: PRNG seed; the same seed gives the same games.
    start: banked scores (points) of the first and second player.
    batch: games per jitted batch.
  """
  a = a if isinstance(a, Dense) else dense(a, layout)
  b = b if isinstance(b, Dense) else dense(b, layout)
  pols = tuple((jnp.asarray(p.class_of_key), jnp.asarray(p.prefer),
                jnp.asarray(p.bank)) for p in (a, b))
  cdf, ids = _roll_sampler(roll)
  arrays = (cdf, ids, jnp.asarray(roll.opt_pts), jnp.asarray(roll.opt_next))
  sizes = (layout.num_rows + 1, layout.bank_min, layout.low, layout.goal,
           layout.penalty)
  st = jnp.asarray([layout.index_of(start[0], "start"),
                    layout.index_of(start[1], "start")], jnp.int32)
  wins = {True: [0, 0], False: [0, 0]}
  steps = 0
  key = jax.random.key(seed)
  for i, s0 in enumerate(range(0, games, batch)):
    g = min(batch, games - s0)
    first_is_a = jnp.arange(g) % 2 == 0
    a_won, done, st_i = _play(jax.random.fold_in(key, i), first_is_a, st,
                              pols, arrays, layout.key_shape, sizes,
                              max_steps)
    if not bool(done.all()):
      raise RuntimeError(f"games unfinished after {max_steps} decisions")
    a_won = np.asarray(a_won)
    fa = np.asarray(first_is_a)
    for flag in (True, False):
      wins[flag][0] += int(a_won[fa == flag].sum())
      wins[flag][1] += int((fa == flag).sum())
    steps = max(steps, int(st_i))

  def rate(w, m):
    p = w / m
    return p, math.sqrt(p * (1 - p) / m)

  f, fse = rate(*wins[True])
  s, sse = rate(*wins[False])
  return Estimate(games, f, fse, s, sse, steps)
