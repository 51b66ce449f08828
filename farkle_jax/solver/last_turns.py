"""The final round of N players: the last turns after a bank at the goal
(docs/model.md §8).

When the mover banks a total at or past the goal, every other player gets
one last turn, in seat order, and wins only by finishing strictly higher
than the highest total so far, the *bar* (a tie goes to whoever got there
first); one who passes it holds the bar against those still to play. As in
the rest of the model, a total past the cap (`rules.final_round_cap` past
the goal) wins outright for whoever reaches it.

Chaser j (seat j from the player who reached the goal) decides on their own
chance alone. For a bar and the scores of the chasers after j, that chance
does not depend on what the earlier players hold: passing the bar at a total
x hands the chasers after j the bar x with j as its holder, and failing
(a farkle; stopping short of the bar wins nothing) leaves the bar as it was.
So, from the last chaser back, every chaser's table is one turn pass
(`vector_pass.turn_pass`) over the running total x, batched over every
threshold (the smallest total that may be banked: one unit over the bar, or
the chaser's own bank floor) and every score of the chasers after:

    phi_j(bar, s_j, .., s_{N-1}) = (holder, w_j, .., w_{N-1})

`holder` the chance that nobody from j on passes the bar, `w_i` chaser i's
chance to win. The channels of j's pass are j's chance, the later chasers'
chances where j passes the bar, and the chance that j fails: what a failure
is worth depends on the bar alone and is added after the pass. With no
chaser after j, the holder wins: phi_N = (1).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import vector_pass
from farkle_jax.solver.bellman import RollArrays

CHUNK = 4096   # thresholds x later scores passed together (bounds memory)


def footprint(seats: SeatsLayout) -> int:
  """Peak bytes of `final_values` (0 without a final round): the tables
  of two chasers, each [P, B^(N-1), N] at most, and one chunk's pass."""
  if not seats.past_goal:
    return 0
  n, P, B = seats.players, seats.past_goal, seats.num_scores
  tables = 2 * P * B ** (n - 1) * n * 8
  passes = (seats.num_rows + 1) * seats.dice_states * (n + 1) * CHUNK * 8 * 3
  return tables + passes + P * B ** (n - 1) * (n + 1) * 8 * 2


def final_values(seats: SeatsLayout, roll: RollArrays | None,
                 phis: list[np.ndarray] | None = None) -> np.ndarray:
  """[P * B^(N-1), N] what a bank at or past the goal is worth; [1, N]
  zeros without a final round (nothing reads them; `roll` may be None).

  Row `bar * B^(N-1) + ravel(s_1, .., s_{N-1})` (`SeatsLayout.final_row`):
  the mover banked a total of goal + bar units (bar < P =
  `seats.past_goal`) and the others hold banked scores (indices) s_1 ..
  s_{N-1} in seat order; the columns are the win chances of the mover and
  of each other seat, in turn order. `phis`: `chaser_tables`, if at hand.
  """
  if not seats.past_goal:
    return np.zeros((1, seats.players))
  phi = (phis or chaser_tables(seats, roll))[-1]
  return phi.reshape(seats.past_goal * seats.num_scores ** (
      seats.players - 1), -1)


def threshold(seats: SeatsLayout, bar, s):
  """tau of a chaser of banked-score index s against the bar goal + bar
  units (ints or arrays): the smallest total that may be banked, one unit
  over the bar or the chaser's bank floor, is goal + 1 + tau; at the cap
  and past it a total wins outright, so tau stops at P - 1."""
  own = seats.score_units(s) + seats.bank_floor(s)
  thr = np.minimum(np.maximum(seats.goal + bar + 1, own),
                   seats.goal + seats.past_goal)
  return thr - seats.goal - 1


def chaser_tables(seats: SeatsLayout, roll: RollArrays
                  ) -> list[np.ndarray]:
  """[phi_N, phi_{N-1}, .., phi_1]: entry m [P, B^m, m + 1] is
  phi_{N-m}, the last m chasers from that one on (rows: the bar; columns:
  the holder, then those chasers); a chaser with m chasers after them
  reads entry m as what passing the bar hands on."""
  phis = [np.ones((seats.past_goal, 1, 1))]
  for _ in range(seats.players - 1):
    phis.append(_chaser_table(seats, roll, phis[-1]))
  return phis


def chaser_turn(seats: SeatsLayout, roll: RollArrays, after: np.ndarray,
                tau: int, later: int) -> np.ndarray:
  """[T + 1, S, C] every in-turn vector of one chaser's last turn, rows
  by running total (row x - the lowest score), for threshold goal + 1 +
  tau units and later chasers' scores index `later` into `after`
  (`chaser_tables` entry of the later chasers); channels as `_passes`."""
  rows = _passes(jnp.asarray(after), jnp.asarray([tau], jnp.int32),
                 jnp.asarray([later], jnp.int32), roll, seats, full=True)
  return np.asarray(rows)[..., 0]


def _chaser_table(seats: SeatsLayout, roll: RollArrays, after: np.ndarray
                  ) -> np.ndarray:
  """phi_j [P, B * L, c + 1] from phi_{j+1} `after` [P, L, c] (docs above;
  the rows of both are the bar, goal + 0 .. P - 1 units)."""
  P, L, c = after.shape
  B = seats.num_scores
  k = P * L
  tau, later = np.divmod(np.arange(k), L)     # threshold goal + 1 + tau
  parts, on_device = [], jnp.asarray(after)
  for lo in range(0, k, CHUNK):
    sl = slice(lo, min(k, lo + CHUNK))
    parts.append(np.asarray(_passes(on_device, jnp.asarray(
        tau[sl], jnp.int32), jnp.asarray(later[sl], jnp.int32), roll,
        seats)))
  u = np.concatenate(parts, axis=-1).reshape(B, c + 1, P, L)
  s = np.arange(B)
  tau = threshold(seats, np.arange(P)[:, None], s[None])          # [P, B]
  u = u.transpose(0, 2, 3, 1)[s[None], tau]                      # [P,B,L,C]
  fail = after[:, None]                                          # [P,1,L,c]
  q = u[..., -1:]
  phi = np.concatenate([q * fail[..., :1], u[..., :1],
                        u[..., 1:-1] + q * fail[..., 1:]], axis=-1)
  return phi.reshape(P, B * L, c + 1)


@functools.partial(jax.jit, static_argnames=("seats", "full"))
def _passes(after: jax.Array, tau: jax.Array, later: jax.Array,
            roll: RollArrays, seats: SeatsLayout, full: bool = False
            ) -> jax.Array:
  """[B, C, k] chaser j's values from every start score (row s, the whole
  hand) for k (threshold, later scores) pairs; channels (j's chance, the
  later chasers' chances where j passes the bar, the chance that j
  fails). With `full`, every row: [T + 1, S, C, k]."""
  P, _, c = after.shape
  k, C = tau.shape[0], c + 1
  top = seats.num_rows - 1                 # a total of goal + P - 1 units
  fail = jnp.zeros((C, k), after.dtype).at[c].set(1.0)
  win = jnp.zeros((C,), after.dtype).at[0].set(1.0)

  def bank(t):
    x = seats.score_units(t)                       # the running total
    ahead = after[jnp.clip(x - seats.goal, 0, P - 1), later].T  # [c, k]
    may = x >= seats.goal + 1 + tau
    ahead = ahead.at[0].set(jnp.where(may, ahead[0], -1.0))
    return jnp.concatenate([ahead, jnp.zeros_like(ahead[:1])], axis=0)

  zeros = jnp.zeros((k,), jnp.int32)
  batch = vector_pass.Batch(farkle=fail, bank_base=zeros, s0=zeros,
                            top=jnp.asarray(top, jnp.int32))
  rows = vector_pass.turn_pass(after, batch, roll, seats, full=True,
                               bank=bank, win=win)
  if full:
    return rows
  return rows[:seats.num_scores, roll.dice_states - 1]   # the whole hand
