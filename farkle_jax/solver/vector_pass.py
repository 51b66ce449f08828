"""The turn pass of N players: value vectors (docs/model.md §8).

Each in-turn state carries C = N channels: the win probability of every
player but the last in turn order from the mover (channel 0: the mover),
and the probability that the turn ends in a farkle. The last player's
chance is what the others leave (`seat_vector`): every value vector sums to
one, as the start values, the win vector and the last turns' values do, and
a pass only mixes them with weights summing to one; so the pass carries one
channel fewer. The mover decides on channel 0 alone; the other channels
follow the decision:

    roll(t, n)  = P_farkle(n) * farkle + sum_r p(r) * W(t + pts[r, j*], next[r, j*])
    j*          = the first option of score set r with the highest channel 0
    W(t, n)     = bank(t) if t >= bank floor and bank(t)[0] >= roll(t, n)[0]
                = roll(t, n) otherwise

with `farkle` the next player's start vector after a farkle, seen from the
mover, and channel N - 1 equal to 1; `bank(t)` the next player's start
vector after banking t (channel N - 1: 0), or the win vector once the bank
reaches the goal (under the final round: the last turns' values,
`last_turns`, and the win vector past the cap); the bank floor is the bank
minimum, or the entry minimum for a mover not on the board yet
(`SeatsLayout.bank_floor`). The farkle channel is the slope of the turn's
value in what a farkle is worth, which the penalty blocks and the Newton
step need.

The solver's stage sweeps take the turn as `turn_exits` gives it: the
pass on channel 0 alone, then every channel as the mix of where the turn
ends (docs/model.md §8).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, row_step
from farkle_jax.solver.bellman import RollArrays

_HIGHEST = jax.lax.Precision.HIGHEST


class Batch(NamedTuple):
  """A batch of k keys whose turns are passed together."""
  farkle: jax.Array     # [C, k] a farkle's value seen from the mover
  bank_base: jax.Array  # [k] int32 `SeatsLayout.bank_base`
  s0: jax.Array         # [k] int32 the mover's banked-score index
  top: jax.Array        # [] int32 highest row to update (-1: none)
  final: jax.Array | None = None  # [P * B^(N-1), N] a bank at or past the
                        #   goal under the final round (`last_turns`);
                        #   None: reaching the goal wins
  start: jax.Array | None = None  # [k] int32 the dice state (0-based) of
                        #   each mover's whole hand (`rules.hands`,
                        #   `SeatsLayout.start_of_base`); None: S - 1


def channels(players: int) -> int:
  """C, the channels an in-turn state carries: N - 1 seats and the farkle
  channel."""
  return players


def win_vector(players: int, dtype) -> jax.Array:
  """[C] the value of a won turn: the mover wins, no farkle."""
  return jnp.zeros((channels(players),), dtype).at[0].set(1.0)


def seat_vector(v: jax.Array, players: int, axis: int = 0) -> jax.Array:
  """[N + 1, ...] every player's chance and the farkle channel from the
  pass's C = N channels `v` (along `axis`): the last player's chance is one
  less the others'."""
  v = jnp.moveaxis(v, axis, 0)
  chances = sum_closed(jnp.concatenate([v[:players - 1],
                                        jnp.zeros_like(v[:1])]))
  out = jnp.concatenate([chances, v[players - 1:]])
  return jnp.moveaxis(out, 0, axis)


def sum_closed(x: jax.Array) -> jax.Array:
  """[N, M] seat values `x` with the last seat's at one less the others':
  stored so, the start vectors sum to one to rounding at every sweep; left
  to sum as solved, the gap the pass's last channel ignores grows (in a
  rotation cycle, about 2x a policy step)."""
  return x.at[-1].set(1 - jnp.sum(x[:-1], axis=0))


def farkle_values(w0: jax.Array, targets: jax.Array, seats: SeatsLayout
                  ) -> jax.Array:
  """[C, k] what a farkle is worth to keys whose farkle targets are
  `targets` ([k] flat keys into w0 [K + 1, N]); channel N - 1 is 1."""
  ahead = seats.from_next(w0[targets].T, jnp)[:-1]       # [N - 1, k]
  return jnp.concatenate([ahead, jnp.ones_like(ahead[:1])], axis=0)


def bank_values(w0: jax.Array, batch: Batch, t: jax.Array,
                seats: SeatsLayout) -> jax.Array:
  """[C, k] what banking t units is worth to the mover of each key."""
  B = seats.num_scores
  reach = seats.on_board(batch.s0, jnp) + t   # a bank puts one on the board
  goal = reach >= B
  sink = w0.shape[0] - 1
  pos = jnp.where(goal, sink, batch.bank_base + t * seats.score_stride)
  ahead = seats.from_next(w0[pos].T, jnp)[:-1]           # [N - 1, k]
  if batch.final is not None:
    others = seats.others_of_base(batch.bank_base)
    at = jnp.clip(reach, B, B + seats.past_goal - 1)
    last = batch.final[seats.final_row(others, at)].T[:-1]
    ahead = jnp.where(goal[None], last, ahead)
    goal = reach >= B + seats.past_goal       # past the cap: a win
  win = win_vector(seats.players, w0.dtype)[:, None]
  ahead = jnp.where(goal[None], win[:-1], ahead)
  return jnp.concatenate([ahead, jnp.zeros_like(ahead[:1])], axis=0)


def turn_pass(w0: jax.Array, batch: Batch, roll: RollArrays,
              seats: SeatsLayout, full: bool = False,
              bank: Callable[[jax.Array], jax.Array] | None = None,
              win: jax.Array | None = None,
              policy: tuple[jax.Array, jax.Array] | None = None,
              picks: bool = False):
  """Backward pass over the turns of a batch of keys.

  Args:
    w0: [K + 1, N] start values (row K: a sink no real key reads).
    batch: the keys.
    roll: the roll tables (`bellman.roll_arrays`).
    seats: the layout (static).
    full: return every row, not only the start of the turn (static).
    bank: t -> [C, k] what banking t is worth (default `bank_values`);
      with `win` ([C], default `win_vector`), the channels may be others
      than those of the solve (strategy evaluation: decisions on a channel
      of their own).
    policy: (prefer [T + 1, S], banks [T + 1, S] bool), a turn policy that
      ignores the scores: channel 0 of every non-winning state is
      `prefer[t, n]`, of a winning one `win[0]` (give it a value above every
      preference), and the mover banks where `banks` says so or where
      banking wins. None: decide on channel 0 as computed.
    picks: also return which option each score set takes (static).

  Returns:
    [C, k] the value vector at (t = 0, the whole hand: dice state S), or
    with `full` the rows [T + 1, S, C, k] (rows above a key's t_max and
    row T: wins; `seat_vector` adds the last player's chance to the
    solve's channels); with `picks`, also [T + 1, R, k] int8 the first option
    with the highest channel 0 of each score set (`roll.groups` order).
  """
  k = batch.s0.shape[0]
  win = win_vector(seats.players, w0.dtype) if win is None else win
  bank = bank or (lambda t: bank_values(w0, batch, t, seats))
  C, S = win.shape[0], roll.dice_states
  rows = jnp.broadcast_to(win[None, None, :, None],
                          (seats.num_rows + 1, S, C, k))
  farkle = roll.farkle_prob[:, None, None] * batch.farkle[None]  # [6, C, k]

  def body(i, rows):
    t = batch.top - i
    value = _roll_values(rows.reshape(-1, C, k), t, roll, seats, farkle)
    new = _decide(value, bank(t), t, batch, seats, policy, win)
    return jax.lax.dynamic_update_index_in_dim(rows, new, t, axis=0)

  rows = jax.lax.fori_loop(0, batch.top + 1, body, rows)
  out = rows if full else _whole_hand(rows[0], batch.start)
  return (out, _picks(rows[:, :, 0], roll, seats)) if picks else out


def _picks(values: jax.Array, roll: RollArrays, seats: SeatsLayout
           ) -> jax.Array:
  """[T + 1, R, k] int8 the first option with the highest channel 0 of
  every score set at every row, from the pass's final values [T + 1, S,
  k] (what each row's own choice saw), by the two-player pass's pick
  (`row_step.best_option`). Every row at once, after the loop: chosen
  within it, the picks made XLA keep every gathered option for two
  readers, and the pass of one channel took 3x as long (BENCHMARKS.md)."""
  T1, k = values.shape[0], values.shape[-1]
  flat = values.reshape(-1, k)
  t = jnp.arange(T1)[:, None, None]
  out = []
  for g in roll.groups:
    idx = seats.reached_offset(t, g.rows[None], jnp)     # [T + 1, R_j, j]
    _, place = row_step.best_option(flat, idx.reshape(-1, idx.shape[-1]),
                                    True, jnp)
    out.append(place.reshape(T1, -1, k))
  return jnp.concatenate(out, axis=1)


def _whole_hand(first: jax.Array, start: jax.Array | None) -> jax.Array:
  """[C, k] the values at t = 0 (`first` [S, C, k]) with each key's whole
  hand: dice state `start` [k] (each mover's own hand), or the last."""
  if start is None:
    return first[-1]
  return first[start, :, jnp.arange(first.shape[-1])].T


def _roll_values(flat: jax.Array, t: jax.Array, roll: RollArrays,
                 seats: SeatsLayout, farkle: jax.Array) -> jax.Array:
  """[S, C, k] the value of rolling at row t (rows above it final, `flat`
  [(T + 1) * S, C, k])."""
  best = jnp.concatenate([_best_option(flat, seats.reached_offset(
      t, g.rows, jnp)) for g in roll.groups], axis=0)           # [R, C, k]
  S, C, k = roll.dice_states, flat.shape[1], flat.shape[2]
  return jnp.dot(roll.set_weight, best.reshape(best.shape[0], -1),
                 precision=_HIGHEST).reshape(S, C, k) + farkle


def _decide(value: jax.Array, banked: jax.Array, t: jax.Array,
            batch: Batch, seats: SeatsLayout,
            policy: tuple[jax.Array, jax.Array] | None, win: jax.Array
            ) -> jax.Array:
  """[S, C, k] row t: banking (`banked` [C, k]) or rolling (`value`), as
  the mover or the `policy` of `turn_pass` decides."""
  may = t >= seats.bank_floor(batch.s0, jnp)                     # [k] or []
  if policy is None:
    take = may & (banked[0][None] >= value[:, 0])
  else:
    wins = (t > seats.t_max(batch.s0, jnp))[None]                # [1, k]
    take = (may & policy[1][t][:, None]) | wins
  new = jnp.where(take[:, None], banked[None], value)
  if policy is not None:
    new = new.at[:, 0].set(jnp.where(wins, win[0], policy[0][t][:, None]))
  return new


class Exits(NamedTuple):
  """How the turns of a batch end under the decisions of their pass."""
  value: jax.Array   # [N + 1, k] the turn's value vector (`seat_vector`)
  bank: jax.Array    # [T + 1, k] probability of banking at each t
  farkle: jax.Array  # [k] probability of a farkle (channel N of `value`)


def turn_exits(w0: jax.Array, batch: Batch, roll: RollArrays,
               seats: SeatsLayout) -> Exits:
  """The turns of a batch, and how each ends under the mover's decisions.

  The mover decides on channel 0 alone, and channel 0 of every state
  reads only channel 0 of what it leads to; so the pass runs on that
  channel (with each score set's pick), the forward pass of the
  two-player Newton step (`bellman.forward_exits`) finds where the turn
  ends, and every channel is the mix of those ends: sum_t bank[t] bank(t)
  + farkle * the farkle value + the rest a win (rows above the batch's
  top). The other channels then cost T + 1 bank reads a key rather than
  a read of every option of every row: with the forward pass, a batch's
  turns (three players, `configs/tiny.py`, 256 keys) in about half the
  time of the pass of every channel alone, and of two players in about
  two thirds (BENCHMARKS.md). The same values as `turn_pass` to rounding,
  and the same decisions.
  """
  win = win_vector(seats.players, w0.dtype)
  banked = lambda t: bank_values(w0, batch, t, seats)
  # The loops read their banks afresh each row, where the gathers fuse
  # with what uses them: read once for all three from `every`, a batch
  # took about 1 ms (10 %) longer.
  rows, chosen = turn_pass(
      w0, batch._replace(farkle=batch.farkle[:1]), roll, seats, full=True,
      bank=lambda t: banked(t)[:1], win=win[:1], picks=True)
  bank, farkle = bellman.forward_exits(
      rows[:, :, 0], chosen, lambda t: banked(t)[0],
      seats.bank_floor(batch.s0, jnp), batch.top, roll, batch.start)
  every = jax.vmap(banked)(jnp.arange(bank.shape[0]))        # [T + 1, C, k]
  value = (jnp.einsum("tk,tck->ck", bank, every, precision=_HIGHEST)
           + farkle[None] * batch.farkle
           + (1 - bank.sum(axis=0) - farkle)[None] * win[:, None])
  return Exits(seat_vector(value, seats.players), bank, farkle)


def _best_option(flat: jax.Array, idx: jax.Array) -> jax.Array:
  """[R_j, C, k] each score set's first option with the highest channel 0
  (`flat` [(T + 1) * 6, C, k] the rows; idx [R_j, j] option offsets)."""
  # A running select over the j columns fuses with the gathers, like the
  # running maximum of the two-player pass (bellman._best_option).
  best = flat[idx[:, 0]]
  for i in range(1, idx.shape[1]):
    other = flat[idx[:, i]]
    best = jnp.where((other[:, 0] > best[:, 0])[:, None], other, best)
  return best
