"""Exact evaluation of one strategy against another (docs/model.md §6.4).

Two steps, both exact up to float64 rounding:

1. Turn outcomes. Under a fixed turn policy a turn from key (b, d, f, e)
   ends by banking t (not winning), by winning, or by a farkle. One forward
   pass over t pushes the probability mass of every in-turn state (t, n) to
   the states its policy leads to (`turn_outcomes`, jitted, batched over
   policy classes).
2. Policy evaluation over the joint state. With A_k (B_k) the probability
   that A (B) wins when it is to move at its key k,

       A_k = win_k + sum_t bank_k[t] (1 - B[(d, b + t, e, 0)])
                   + farkle_k (1 - B[(d, b', e, f')])

   and the same with A and B swapped. Without a penalty every bank raises
   b + d, and a farkle only swaps the players, so one pass over score-sum
   levels from the top solves each pair {A(b, d), B(d, b)} exactly
   (`_solve_levels`); with a penalty Gauss-Seidel iteration runs to a
   tolerance.
"""

from __future__ import annotations

import functools
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import memory
from farkle_jax.strategy.policies import Strategy

BATCH_ELEMENTS = 2 ** 25  # option gathers per batch and turn total
LOG_SECONDS = 10          # long work logs how far it is at least this often


class Outcomes(NamedTuple):
  """How the turns of some policy classes end."""
  bank: np.ndarray    # [C, T + 1] P(bank t, not winning)
  win: np.ndarray     # [C] P(bank and win)
  farkle: np.ndarray  # [C] P(farkle)


class Result(NamedTuple):
  """Win probabilities of A against B."""
  first: float        # A moves first
  second: float       # B moves first
  a_to_move: np.ndarray  # [B, D, F, E] P(A wins), A to move at the key
  b_to_move: np.ndarray  # [B, D, F, E] P(B wins), B to move at the key

  @property
  def overall(self) -> float:
    """First player chosen at random."""
    return 0.5 * (self.first + self.second)


@functools.partial(jax.jit, static_argnames=("layout",))
def _forward(prefer, bank, t_max, start, flat_opt, dice, prob, farkle_prob,
             layout: StateLayout):
  """Turn outcome probabilities of k classes.

  Args:
    prefer: [k, T + 1, S] preferences; bank: [k, T + 1, S] bool.
    t_max: [k] last non-winning turn total (units).
    start: [k] int32 the dice state each class's turn starts from.
    flat_opt: [R, J] int32 `layout.turn_offset` of each option.
    dice: [R] int32 dice of each score set (0-based); prob: [R].
    farkle_prob: [S].
    layout: the state layout (static).
  """
  k, rows, S = prefer.shape
  T = rows - 1
  flat_pref = prefer.reshape(k, -1)
  ar = jnp.arange(k)[:, None]

  def body(t, carry):
    mass, banked, win, farkle = carry
    m = jax.lax.dynamic_index_in_dim(mass.reshape(k, rows, S), t, 1,
                                     keepdims=False)        # [k, S]
    wins = t > t_max                                         # [k]
    b = jax.lax.dynamic_index_in_dim(bank, t, 1, keepdims=False)
    b = b & (t >= layout.bank_min) & ~wins[:, None]
    win = win + jnp.where(wins, m.sum(1), 0.0)
    banked = banked.at[:, t].set((m * b).sum(1))
    m = jnp.where(wins[:, None] | b, 0.0, m)
    farkle = farkle + m @ farkle_prob
    idx = layout.reached_offset(t, flat_opt, jnp)           # [R, J]
    reached_t = layout.row_of(idx)
    score = flat_pref[:, idx]                                # [k, R, J]
    score = jnp.where(reached_t[None] > t_max[:, None, None], jnp.inf, score)
    j = jnp.argmax(score, axis=2)                            # [k, R]
    target = jnp.take_along_axis(
        jnp.broadcast_to(idx[None], score.shape), j[..., None], 2)[..., 0]
    w = m[:, dice] * prob[None]                              # [k, R]
    mass = mass.at[ar, target].add(w)
    return mass, banked, win, farkle

  mass = jnp.zeros((k, rows * S), prefer.dtype)
  mass = mass.at[jnp.arange(k), layout.turn_offset(0, start)].set(1.0)
  zeros = jnp.zeros((k,), prefer.dtype)
  mass, banked, win, farkle = jax.lax.fori_loop(
      0, T, body, (mass, jnp.zeros((k, rows), prefer.dtype), zeros, zeros))
  win = win + mass.reshape(k, rows, S)[:, T].sum(1)
  return banked, win, farkle


def turn_outcomes(strategy: Strategy, layout: StateLayout,
                  roll: roll_tables.RollTables,
                  classes: np.ndarray | None = None) -> Outcomes:
  """Outcomes of the turns of some classes (default: those keys use)."""
  if classes is None:
    classes = np.unique(strategy.class_of_key)
  classes = np.asarray(classes)
  # Host arrays: the bank distribution of every class and of every key.
  need = 8 * (layout.num_rows + 1) * (len(classes) + layout.num_keys)
  memory.check_arrays(need, "the turn outcomes of a strategy")
  flat_opt = layout.turn_offset(roll.opt_pts, roll.opt_next)
  per_class = flat_opt.size * (layout.num_rows + 1)
  batch = max(1, min(len(classes), BATCH_ELEMENTS // per_class))
  outs = []
  args = (jnp.asarray(flat_opt), jnp.asarray(roll.set_dice - 1),
          jnp.asarray(roll.set_prob), jnp.asarray(roll.farkle_prob))
  began = logged = time.time()
  for start in range(0, len(classes), batch):
    if time.time() - logged >= LOG_SECONDS:   # long work says how far
      logged = time.time()
      logging.info("turn outcomes of %s: %d of %d turn policies, ETA %.0f s",
                   strategy.name, start, len(classes),
                   (logged - began) * (len(classes) - start) / start)
    sel = classes[start:start + batch]
    pad = batch - len(sel)
    sel_p = np.concatenate([sel, np.repeat(sel[-1:], pad)])
    prefer, bank = strategy.policy(sel_p)
    t_max = layout.t_max(strategy.class_b[sel_p])
    # Below the entry minimum, a player not on the board may not bank.
    rows = np.arange(bank.shape[1])[None, :, None]
    bank = bank & (rows >= np.reshape(
        layout.bank_floor(strategy.class_b[sel_p]), (-1, 1, 1)))
    out = _forward(jnp.asarray(prefer, jnp.float64), jnp.asarray(bank),
                   jnp.asarray(t_max, jnp.int32),
                   jnp.asarray(strategy.start_states(layout, sel_p),
                               jnp.int32), *args, layout=layout)
    outs.append([np.asarray(o)[:len(sel)] for o in out])
  full = [np.concatenate(x) for x in zip(*outs)]
  size = int(classes.max()) + 1
  res = []
  for x in full:
    y = np.zeros((size,) + x.shape[1:])
    y[classes] = x
    res.append(y)
  return Outcomes(*res)


def _bank_and_win(out: Outcomes, class_of_key: np.ndarray,
                  padded: np.ndarray, layout: StateLayout,
                  keys: np.ndarray | slice = slice(None)) -> np.ndarray:
  """P(win) + sum_t P(bank t) (1 - the other's value after the bank).

  Args:
    padded: `layout.padded_start` of the other player's values.
  """
  fields = layout.key_fields(np.arange(layout.num_keys)[keys])
  c = class_of_key[keys]
  after_bank = layout.bank_values(padded, fields, out.bank.shape[1])
  return out.win[c] + (out.bank[c] * after_bank).sum(1)


def _solve_levels(out_a, cls_a, out_b, cls_b, layout):
  """Exact values without a penalty: score-sum levels from the top.

  The values live in padded start vectors (bank lookups), filled in place.
  """
  N = layout.num_scores
  flat_a = np.zeros(layout.padded_size)
  flat_b = np.zeros(layout.padded_size)
  fa, fb = out_a.farkle[cls_a], out_b.farkle[cls_b]
  for s in range(2 * N - 2, -1, -1):
    bi = np.arange(max(0, s - N + 1), min(s, N - 1) + 1)
    keys = layout.key_index(bi, s - bi, 0, 0)
    # Wins and banks lead to higher levels, already final.
    ca = _bank_and_win(out_a, cls_a, flat_b, layout, keys)
    cb = _bank_and_win(out_b, cls_b, flat_a, layout, keys)
    # a_k = ca_k + fa_k (1 - b_swap); b_swap = cb_swap + fb_swap (1 - a_k).
    # Within a level the swap of keys[i] is keys[-1 - i].
    pa, pb = fa[keys], fb[keys]
    at = layout.padded_index(bi, s - bi, 0, 0)
    flat_a[at] = (ca + pa * (1 - cb[::-1] - pb[::-1])) / (1 - pa * pb[::-1])
    flat_b[at] = (cb + pb * (1 - ca[::-1] - pa[::-1])) / (1 - pb * pa[::-1])
  return (np.ascontiguousarray(layout.unpad(flat_a)),
          np.ascontiguousarray(layout.unpad(flat_b)))


def _iterate(out_a, cls_a, out_b, cls_b, layout, tol, max_iter):
  """Gauss-Seidel policy evaluation to an absolute tolerance."""
  a = np.full(layout.key_shape, 0.5)
  b = np.full(layout.key_shape, 0.5)
  after_farkle = layout.farkle_index(layout.key_fields())
  fa, fb = out_a.farkle[cls_a], out_b.farkle[cls_b]

  def turn(out, cls, f, other):
    value = _bank_and_win(out, cls, layout.padded_start(other), layout)
    value += f * (1 - other.reshape(-1)[after_farkle])
    return value.reshape(layout.key_shape)

  logged = time.time()
  for sweep in range(max_iter):
    new_a = turn(out_a, cls_a, fa, b)
    new_b = turn(out_b, cls_b, fb, new_a)
    change = max(np.abs(new_a - a).max(), np.abs(new_b - b).max())
    a, b = new_a, new_b
    if time.time() - logged >= LOG_SECONDS:
      logged = time.time()
      logging.info("evaluation sweep %d: max change %.3e (to %.0e)",
                   sweep + 1, change, tol)
    if change < tol:
      return a, b
  raise RuntimeError(f"policy evaluation did not reach {tol} in {max_iter} "
                     f"iterations (last change {change:.3e})")


def evaluate_outcomes(out_a: Outcomes, cls_a: np.ndarray, out_b: Outcomes,
                      cls_b: np.ndarray, layout: StateLayout,
                      start: tuple[int, int] = (0, 0), tol: float = 1e-14,
                      max_iter: int = 100_000) -> Result:
  """Evaluates A against B from their turn outcomes.

  Args:
    out_a, out_b: turn outcomes per class; cls_a, cls_b: [K] class of keys.
    layout: the state layout.
    start: banked scores (points) of the first and second player.
    tol: absolute tolerance of the iteration (penalty rules only).
  """
  # Without a penalty a farkle swaps the scores within their level; with
  # one (even a penalty at every farkle, one farkle count) it may not.
  if not layout.rules.has_penalty and not layout.rules.hands:
    a, b = _solve_levels(out_a, cls_a, out_b, cls_b, layout)
  else:
    a, b = _iterate(out_a, cls_a, out_b, cls_b, layout, tol, max_iter)
  key = layout.opening_key(*start)
  first = float(a[key])
  second = float(1 - b[key])
  return Result(first, second, a, b)


def evaluate(a: Strategy, b: Strategy, layout: StateLayout,
             roll: roll_tables.RollTables, start: tuple[int, int] = (0, 0),
             tol: float = 1e-14) -> Result:
  """The exact probability that strategy A beats strategy B."""
  if layout.rules.final_round:
    raise ValueError("the final round is not modelled here yet (the chaser's "
                     "last turn): use rules without rules.final_round")
  out_a = turn_outcomes(a, layout, roll)
  out_b = out_a if b is a else turn_outcomes(b, layout, roll)
  return evaluate_outcomes(out_a, a.class_of_key, out_b, b.class_of_key,
                           layout, start, tol)
