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

With shared ties (`rules.final_round_ties = "shared"`) a chaser may also
bank a total equal to the bar, and the players tied at the top share the
win equally. The tables then take the number of players holding the bar,
h: phi_j(bar, h, ..), whose `holder` is each holder's expected share. A
tie hands on phi_{j+1}(bar, h + 1) to j and to every holder alike (one
more channel of j's pass: what the holders keep through j's tie), passing
the bar hands on phi_{j+1}(x, 1), a failure phi_{j+1}(bar, h); with no
chaser after j, phi_N(bar, h) = (1 / h). Chaser j faces at most j holders
(the mover and the chasers before), so phi_j takes h = 1 .. j.
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


def shared(seats: SeatsLayout) -> bool:
  """Whether players tied at the bar share the win."""
  return seats.rules.ties_shared


def footprint(seats: SeatsLayout) -> int:
  """Peak bytes of `final_values` (0 without a final round): the tables
  of two chasers, each [P, H, B^(N-1), N] at most (H = N - 1 holders of
  the bar with shared ties, else 1), and one chunk's pass."""
  if not seats.past_goal:
    return 0
  n, P, B = seats.players, seats.past_goal, seats.num_scores
  H = n - 1 if shared(seats) else 1
  tables = 2 * P * H * B ** (n - 1) * n * 8
  passes = (seats.num_rows + 1) * seats.dice_states * (n + 2) * CHUNK * 8 * 3
  return tables + passes + P * (H + 1) * B ** (n - 1) * (n + 2) * 8 * 2


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
  phi = (phis or chaser_tables(seats, roll))[-1][:, 0]   # one holder
  return phi.reshape(seats.past_goal * seats.num_scores ** (
      seats.players - 1), -1)


def threshold(seats: SeatsLayout, bar, s):
  """tau of a chaser of banked-score index s against the bar goal + bar
  units (ints or arrays): the smallest total that may be banked, one unit
  over the bar (the bar itself with shared ties) or the chaser's bank
  floor, is goal + 1 + tau; at the cap and past it a total wins outright,
  so tau stops at P - 1."""
  own = seats.score_units(s) + seats.bank_floor(s)
  least = seats.goal + bar + (0 if shared(seats) else 1)
  thr = np.minimum(np.maximum(least, own), seats.goal + seats.past_goal)
  return thr - seats.goal - 1


def running_row(seats: SeatsLayout, s):
  """Row of a chaser's last turn (rows by running total, from the lowest
  score) where a chaser of banked-score index s starts; a total x units
  sits at row x - the lowest score, on the board or not."""
  return seats.score_units(s) - seats.low


def running_total(seats: SeatsLayout, row):
  """The running total (units) of a row of a chaser's last turn (the
  inverse of `running_row`)."""
  return row + seats.low


def chaser_tables(seats: SeatsLayout, roll: RollArrays
                  ) -> list[np.ndarray]:
  """[phi_N, phi_{N-1}, .., phi_1]: entry m [P, H, B^m, m + 1] is
  phi_{N-m}, the last m chasers from that one on (the bar, then h - 1 for
  h players holding it, H = N - m with shared ties, else 1; columns: a
  holder, then those chasers); a chaser with m chasers after them reads
  entry m as what banking hands on."""
  H = seats.players if shared(seats) else 1
  holders = np.arange(1, H + 1, dtype=float)[None, :, None, None]
  phis = [np.broadcast_to(1 / holders, (seats.past_goal, H, 1, 1))]
  for _ in range(seats.players - 1):
    phis.append(_chaser_table(seats, roll, phis[-1]))
  return phis


def chaser_turn(seats: SeatsLayout, roll: RollArrays, after: np.ndarray,
                tau: int, later: int, tie: int = 0) -> np.ndarray:
  """[T + 1, S, C] every in-turn vector of one chaser's last turn, rows
  by running total (row x - the lowest score), for threshold goal + 1 +
  tau units and later chasers' scores index `later` into `after`
  (`chaser_tables` entry of the later chasers), `tie` as `_passes`;
  channels as `_passes`."""
  rows = _passes(jnp.asarray(after), jnp.asarray([tau], jnp.int32),
                 jnp.asarray([later], jnp.int32),
                 jnp.asarray([tie], jnp.int32), roll, seats, full=True)
  return np.asarray(rows)[..., 0]


def _chaser_table(seats: SeatsLayout, roll: RollArrays, after: np.ndarray
                  ) -> np.ndarray:
  """phi_j [P, H', B * L, c + 1] from phi_{j+1} `after` [P, H, L, c]
  (docs above; the rows of both are the bar, goal + 0 .. P - 1 units;
  H' = H - 1 with shared ties, else 1)."""
  P, H, L, c = after.shape
  B, ties = seats.num_scores, shared(seats)
  Ho = H - 1 if ties else 1
  # The passes: every threshold without a tie, then (shared ties) every
  # bar at its own total as the lowest bank, for each number of holders.
  tau, tie, later = (np.concatenate(a) for a in zip(
      _grid(np.arange(P), np.zeros(1), L),
      _grid(np.arange(P) - 1, np.arange(1, Ho + 1) if ties else [], L)))
  k = tau.size
  parts, on_device = [], jnp.asarray(after)
  for lo in range(0, k, CHUNK):
    sl = slice(lo, min(k, lo + CHUNK))
    parts.append(np.asarray(_passes(on_device, *(
        jnp.asarray(a[sl], jnp.int32) for a in (tau, later, tie)),
        roll, seats)))
  u = np.concatenate(parts, axis=-1).transpose(0, 2, 1)     # [B0, k, C]
  s, bars = np.arange(B), np.arange(P)
  thr = threshold(seats, bars[:, None], s[None])                  # [P, B]
  at_bar = thr == bars[:, None] - 1      # the lowest bank is a tie
  h = np.arange(Ho)[None, :, None]
  col = np.where(at_bar[:, None], ((h + 1) * P + bars[:, None, None]) * L,
                 np.maximum(thr, 0)[:, None] * L)                # [P, Ho, B]
  start = running_row(seats, s)[None, None, :, None]
  u = u[start, col[..., None] + np.arange(L)]                   # [P,Ho,B,L,C]
  fail = after[:, :Ho, None]                                # [P, Ho, 1, L, c]
  q = u[..., c:c + 1]
  kept = q * fail[..., :1] + (u[..., c + 1:] if ties else 0)
  phi = np.concatenate([kept, u[..., :1], u[..., 1:c] + q * fail[..., 1:]],
                       axis=-1)
  return phi.reshape(P, Ho, B * L, c + 1)


def _grid(tau, tie, L: int) -> tuple[np.ndarray, ...]:
  """Flat (tau, tie, later) arrays of every such triple: tie outermost,
  then tau, then later (the order `_chaser_table` reads the passes in)."""
  tau, tie, later = np.meshgrid(np.asarray(tau), np.asarray(tie),
                                np.arange(L), indexing="ij")
  order = (1, 0, 2)   # tie outermost, then tau, then later
  return tuple(a.transpose(order).ravel().astype(np.int64)
               for a in (tau, tie, later))


@functools.partial(jax.jit, static_argnames=("seats", "full"))
def _passes(after: jax.Array, tau: jax.Array, later: jax.Array,
            tie: jax.Array, roll: RollArrays, seats: SeatsLayout,
            full: bool = False) -> jax.Array:
  """[B0, C, k] chaser j's values from every start total (row x - the
  lowest score, B0 = goal - lowest score; the whole hand) for k
  (threshold, later scores, tie) triples; channels (j's chance, the
  later chasers' chances where j banks, the chance that j fails, and with
  shared ties what each holder keeps through j's tie).
  `tie` h > 0: the lowest bankable total, goal + 1 + tau, ties a bar held
  by h players (j then joins them: `after` at h + 1 holders); 0: no tie.
  With `full`, every row: [T + 1, S, C, k]."""
  P, _, _, c = after.shape
  ties = shared(seats)
  k, C = tau.shape[0], c + 1 + ties
  top = seats.num_rows - 1                 # a total of goal + P - 1 units
  fail = jnp.zeros((C, k), after.dtype).at[c].set(1.0)
  win = jnp.zeros((C,), after.dtype).at[0].set(1.0)

  def bank(t):
    x = running_total(seats, t)
    bar = jnp.clip(x - seats.goal, 0, P - 1)
    ahead = after[bar, 0, later].T                 # [c, k] j holds alone
    kept = [jnp.zeros_like(ahead[:1])]             # the fail channel
    if ties:
      tied = (tie > 0) & (x == seats.goal + 1 + tau)
      shares = after[bar, tie, later].T            # h + 1 holders
      ahead = jnp.where(tied, shares, ahead)
      kept.append(jnp.where(tied, shares[0], 0.0)[None])
    may = x >= seats.goal + 1 + tau
    ahead = ahead.at[0].set(jnp.where(may, ahead[0], -1.0))
    return jnp.concatenate([ahead] + kept, axis=0)

  zeros = jnp.zeros((k,), jnp.int32)
  batch = vector_pass.Batch(farkle=fail, bank_base=zeros, s0=zeros,
                            top=jnp.asarray(top, jnp.int32))
  rows = vector_pass.turn_pass(after, batch, roll, seats, full=True,
                               bank=bank, win=win)
  if full:
    return rows
  # The whole hand from every start on the board (`running_row`).
  return rows[:seats.goal - seats.low, roll.dice_states - 1]
