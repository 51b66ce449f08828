"""Vectorized Monte Carlo play of two strategies, seeded (docs/model.md §6.5).

Every game of a batch advances one decision per step: bank, or roll (a
farkle, or a score set drawn with its exact probability, then the scoring
the strategy prefers). Half the games start with A, half with B. The games
use the same turn policies as the exact evaluator (`strategies`), so the two
can be compared within sampling error.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import memory
from farkle_jax.strategy.policies import Strategy

# A simulation's most games: 6 minutes at 280,000 games/s (goal 1,000,
# 2 cores); longer games take longer, shown by the progress bar's ETA.
MAX_GAMES = 10**8


class Dense(NamedTuple):
  """A strategy's policy materialized for every class keys use."""
  class_of_key: np.ndarray  # [K] int32 dense class ids
  prefer: np.ndarray        # [C, T + 1, S] float64
  bank: np.ndarray          # [C, T + 1, S] bool


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
  need = 9 * 2 * len(used) * rows * layout.dice_states
  for on_device in (False, True):
    memory.check_arrays(need, f"the policy of {strategy.name!r}", on_device)
  prefer, bank = [], []
  for start in range(0, len(used), batch):
    p, b = strategy.policy(used[start:start + batch])
    prefer.append(np.asarray(p, np.float64))
    bank.append(np.asarray(b, bool))
  return Dense(inverse.astype(np.int32).reshape(-1), np.concatenate(prefer),
               np.concatenate(bank))


def _roll_sampler(roll: roll_tables.RollTables):
  """[S, W] cumulative probabilities and row ids (-1: farkle) per n."""
  S = roll.dice_states
  width = max(int((roll.set_dice == n).sum()) for n in range(1, S + 1)) + 1
  cdf = np.ones((S, width))
  ids = np.full((S, width), -1, np.int32)
  for n in range(1, S + 1):
    rows = np.nonzero(roll.set_dice == n)[0]
    p = np.concatenate([[roll.farkle_prob[n - 1]], roll.set_prob[rows]])
    c = np.cumsum(p)
    cdf[n - 1, :len(c)] = c
    cdf[n - 1, len(c) - 1:] = 2.0   # the last outcome takes any rounding
    ids[n - 1, 1:len(c)] = rows
    ids[n - 1, len(c):] = rows[-1] if len(rows) else -1  # all farkle
  return jnp.asarray(cdf), jnp.asarray(ids)


class _Games(NamedTuple):
  """Loop state of a batch of games; players by index 0 = A, 1 = B."""
  score: jax.Array    # [G, 2] int32 banked-score index of each player
  farkles: jax.Array  # [G, 2] int32 farkle count of each player (under
                      #   rules.hands: their hand)
  mover: jax.Array    # [G] int32 player to move
  t: jax.Array        # [G] int32 turn total, units
  n: jax.Array        # [G] int32 dice to roll
  done: jax.Array     # [G] bool
  a_won: jax.Array    # [G] bool


def _decide(pols, layout: StateLayout, k, t, n, t_opt, n_opt, mover):
  """(preference [G, J] over the options, bank [G]) of the player to move."""
  rows = layout.num_rows + 1
  prefs, banks = [], []
  for cls, pref, bank in pols:
    c = cls[k] * rows * layout.dice_states
    reached = layout.turn_offset(jnp.minimum(t_opt, layout.num_rows), n_opt)
    prefs.append(pref.reshape(-1)[c[:, None] + reached])
    banks.append(bank.reshape(-1)[c + layout.turn_offset(t, n)])
  return (jnp.where((mover == 0)[:, None], *prefs),
          jnp.where(mover == 0, *banks))


def _step(games: _Games, u, pols, roll_arrays, layout: StateLayout
          ) -> _Games:
  """One decision of every live game, with uniforms u [G] for its roll."""
  cdf, ids, pts, nxt = roll_arrays
  p, ar = games.mover, jnp.arange(games.mover.shape[0])
  fields = (games.score[ar, p], games.score[ar, 1 - p],
            games.farkles[ar, p], games.farkles[ar, 1 - p])
  me, fm = fields[0], fields[2]
  t, n = games.t, games.n
  t_max = layout.t_max(me, jnp)
  r = ids[n - 1, jnp.sum(u[:, None] >= cdf[n - 1], axis=1)]
  farkled = r < 0
  t_opt = t[:, None] + pts[jnp.maximum(r, 0)]                 # [G, J]
  n_opt = nxt[jnp.maximum(r, 0)]
  pref, banks = _decide(pols, layout, layout.key_index(*fields), t, n, t_opt,
                        n_opt, p)
  banks = banks & (t >= layout.bank_floor(me, jnp))
  j = jnp.argmax(jnp.where(t_opt > t_max[:, None], jnp.inf, pref), axis=1)
  t_new = jnp.take_along_axis(t_opt, j[:, None], 1)[:, 0]
  n_new = jnp.take_along_axis(n_opt, j[:, None], 1)[:, 0]
  wins = ~banks & ~farkled & (t_new > t_max)
  ends = banks | farkled
  _, me_bank, _, fm_bank = layout.after_bank(fields, t, jnp)
  _, me_farkle, _, fm_farkle = layout.farkle_fields(fields, jnp)
  me_new = jnp.where(banks, me_bank, jnp.where(farkled, me_farkle, me))
  fm_new = jnp.where(banks, fm_bank, jnp.where(farkled, fm_farkle, fm))
  live = ~games.done

  def upd(new, old):
    return jnp.where(live, new, old)

  return _Games(
      score=games.score.at[ar, p].set(upd(me_new, me)),
      farkles=games.farkles.at[ar, p].set(upd(fm_new, fm)),
      mover=upd(jnp.where(ends, 1 - p, p), p),
      t=upd(jnp.where(ends, 0, t_new), t),
      n=upd(jnp.where(ends, layout.start_state(games.farkles[ar, 1 - p],
                                               jnp), n_new), n),
      done=games.done | (live & wins),
      a_won=games.a_won | (live & wins & (p == 0)))


@functools.partial(jax.jit, static_argnames=("layout", "max_steps"))
def _play(key, first_is_a, start, pols, roll_arrays, layout: StateLayout,
          max_steps: int):
  """Plays a batch of games to the end; returns (A won [G], done [G],
  steps)."""
  g = first_is_a.shape[0]
  score = jnp.broadcast_to(start, (g, 2)).astype(jnp.int32)  # [first, second]
  zeros = jnp.zeros(g, jnp.int32)
  # Under rules.hands the first player holds hand 1 (farkle field 0).
  hands = jnp.asarray([0, 1] if layout.rules.hands else [0, 0], jnp.int32)
  hands = jnp.broadcast_to(hands, (g, 2))
  games = _Games(score=jnp.where(first_is_a[:, None], score, score[:, ::-1]),
                 farkles=jnp.where(first_is_a[:, None], hands,
                                   hands[:, ::-1]),
                 mover=jnp.where(first_is_a, 0, 1), t=zeros,
                 n=zeros + layout.start_state(0, jnp), done=jnp.zeros(g, bool),
                 a_won=jnp.zeros(g, bool))

  def step(carry):
    games, i = carry
    u = jax.random.uniform(jax.random.fold_in(key, i), (g,))
    return _step(games, u, pols, roll_arrays, layout), i + 1

  def cond(carry):
    games, i = carry
    return (i < max_steps) & ~games.done.all()

  games, steps = jax.lax.while_loop(cond, step, (games, jnp.int32(0)))
  return games.a_won, games.done, steps


def simulate(a: Strategy | Dense, b: Strategy | Dense, layout: StateLayout,
             roll: roll_tables.RollTables, games: int, seed: int = 0,
             start: tuple[int, int] = (0, 0), batch: int = 2 ** 18,
             max_steps: int = 100_000,
             on_progress: Callable[[int, int], None] | None = None
             ) -> Estimate:
  """Plays `games` games of A against B (half with A first).

  Args:
    a, b: the strategies (or their dense policies).
    layout, roll: the rules' layout and roll tables.
    games: number of games (even).
    seed: PRNG seed; the same seed gives the same games.
    start: banked scores (points) of the first and second player.
    batch: games per jitted batch.
    on_progress: told (games played, games) after each batch.
  """
  if not 0 < games <= MAX_GAMES:
    raise ValueError(f"games={games}: from 1 to {MAX_GAMES:,}")
  if layout.rules.final_round:
    raise ValueError("the final round is not modelled here yet (the chaser's "
                     "last turn): use rules without rules.final_round")
  a = a if isinstance(a, Dense) else dense(a, layout)
  b = b if isinstance(b, Dense) else dense(b, layout)
  pols = tuple((jnp.asarray(p.class_of_key), jnp.asarray(p.prefer),
                jnp.asarray(p.bank)) for p in (a, b))
  cdf, ids = _roll_sampler(roll)
  arrays = (cdf, ids, jnp.asarray(roll.opt_pts), jnp.asarray(roll.opt_next))
  st = jnp.asarray(layout.opening_key(*start)[:2], jnp.int32)
  wins = {True: [0, 0], False: [0, 0]}
  steps = 0
  key = jax.random.key(seed)
  for i, s0 in enumerate(range(0, games, batch)):
    g = min(batch, games - s0)
    first_is_a = jnp.arange(g) % 2 == 0
    a_won, done, st_i = _play(jax.random.fold_in(key, i), first_is_a, st,
                              pols, arrays, layout, max_steps)
    if not bool(done.all()):
      raise RuntimeError(f"games unfinished after {max_steps} decisions")
    a_won = np.asarray(a_won)
    fa = np.asarray(first_is_a)
    for flag in (True, False):
      wins[flag][0] += int(a_won[fa == flag].sum())
      wins[flag][1] += int((fa == flag).sum())
    steps = max(steps, int(st_i))
    if on_progress is not None:
      on_progress(s0 + g, games)

  f, fse = win_rate(*wins[True])
  s, sse = win_rate(*wins[False])
  return Estimate(games, f, fse, s, sse, steps)


def win_rate(wins: int, games: int) -> tuple[float, float]:
  """The share of games won and its standard error, sqrt(p (1 - p) / games)
  of that share: what every simulation reports beside the exact value."""
  p = wins / games
  return p, math.sqrt(p * (1 - p) / games)
