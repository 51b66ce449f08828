"""The turn pass of the win-probability model (docs/model.md §3).

Within a turn t only grows, so the values of one turn follow from one
backward pass over t, given the start-of-turn values W0 that banking and
farkling lead to:

    roll(t, n) = P_farkle(n) * (1 - W0[farkle key])
               + sum_r p(r) * max_j W(t + pts[r, j], next[r, j])
    W(t, n)    = max(roll(t, n), 1 - W0[d, b + t, e, 0])  if t >= bank minimum
               = roll(t, n)                               otherwise

Both solve methods (`value_iteration`, `ordered`) are this pass, a jitted
loop over the rows; everything is a gather over the roll tables and the
positions of `game.layout`. The arithmetic of a row is `row_step`'s, which
the queries of a solved run also run, in NumPy, one key at a time.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout, flat_turn, turn_row
from farkle_jax.solver import change_norm, placement, row_step, sweep_counts

# The roll tables as arrays (`row_step`, which owns the row arithmetic).
OptionGroup = row_step.OptionGroup
RollArrays = row_step.RollArrays


def roll_arrays(roll: roll_tables.RollTables, dtype=jnp.float64) -> RollArrays:
  """Puts the roll tables on the default device, options grouped by count
  (built with NumPy, then moved: `placement.on_device`)."""
  return jax.tree.map(placement.on_device,
                      row_step.roll_arrays(roll, np.dtype(dtype), np))


class RowPlan(NamedTuple):
  """One row of the turn pass as a byte-lean kernel reads it (hashable: a
  jit constant). A row's options reach few distinct states: 102 distinct
  (gain, next dice) targets against 823 options for `facebook`, so a kernel
  reads each target once and takes every score set's best from that block.

  Attributes:
    gains: [D] units each distinct target adds to the turn total.
    dice: [D] its next dice count minus one.
    sets: per dice state n (S): per option count j: the options of each of
      its score sets, as indices into the D targets ([R_nj][j]).
    weights: per dice count n: the probability of each of its score sets,
      in the order of `sets`.
  """
  gains: tuple[int, ...]
  dice: tuple[int, ...]
  sets: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...]
  weights: tuple[tuple[float, ...], ...]

  @property
  def num_targets(self) -> int:
    return len(self.gains)

  @property
  def num_options(self) -> int:
    return sum(len(o) for n in self.sets for g in n for o in g)


def row_plan(roll: RollArrays) -> RowPlan:
  """The distinct targets of a row and each score set's options among them
  (docs/model.md §4.3)."""
  offsets = [np.asarray(g.rows) for g in roll.groups]
  weight = np.asarray(roll.set_weight)
  targets = np.unique(np.concatenate([o.ravel() for o in offsets]))
  where = {int(o): i for i, o in enumerate(targets)}
  S = roll.dice_states
  by_dice = [dict() for _ in range(S)]
  probs = [dict() for _ in range(S)]
  r = 0
  for rows in offsets:
    for options in rows:
      n = int(np.argmax(weight[:, r] > 0))
      j = len(options)
      by_dice[n].setdefault(j, []).append(tuple(where[int(o)]
                                                for o in options))
      probs[n].setdefault(j, []).append(float(weight[n, r]))
      r += 1
  return RowPlan(
      gains=tuple(int(x) for x in turn_row(targets, S)),
      dice=tuple(int(x) for x in targets % S),
      sets=tuple(tuple(tuple(by_dice[n][j]) for j in sorted(by_dice[n]))
                 for n in range(S)),
      weights=tuple(tuple(p for j in sorted(probs[n]) for p in probs[n][j])
                    for n in range(S)))


def turn_pass(rows: jax.Array, x_farkle: jax.Array, padded: jax.Array,
              bank_base: jax.Array, top: jax.Array, roll: RollArrays,
              layout: StateLayout, relative: bool, picks: bool = False,
              rolls: bool = False) -> tuple[jax.Array, ...]:
  """Backward pass over the turns of a batch of keys.

  Args:
    rows: [T + 1, S, k] values of the batch (row T: the wins, ones).
    x_farkle: [k] value of a farkle, 1 - W0 of the opponent's next key.
    padded: [layout.padded_size] padded start vector (bank lookups).
    bank_base: [k] int32 `layout.bank_base` of the keys.
    top: [] int32, the highest row to update; roll: the roll tables.
    layout: the state layout (static).
    relative: report the change as |dW| / W instead of |dW| (static).
    picks: also return which option each score set takes (static).
    rolls: also return the value of rolling on, before the bank (static).

  Returns:
    The updated rows [T + 1, S, k], the largest change of any updated
    entry, with `picks` [T + 1, R, k] int8: the option each score set takes
    at row t (the first best one; score sets in `roll.groups` order), and
    with `rolls` [T + 1, S, k]: the value of rolling on at each updated
    (t, n) (rows not updated keep `rows`).
  """
  k, sets = rows.shape[-1], sum(g.rows.shape[0] for g in roll.groups)
  body = _row_body(x_farkle, padded, bank_base, top, roll, layout, relative,
                   picks, rolls)
  chosen = jnp.zeros((rows.shape[0] if picks else 0, sets, k), jnp.int8)
  rolled = rows if rolls else jnp.zeros((0,), rows.dtype)
  out = jax.lax.fori_loop(0, top + 1, body, (rows, jnp.zeros((), rows.dtype),
                                            chosen, rolled))
  return out[:2] + out[2:3] * picks + out[3:] * rolls


def _row_body(x_farkle, padded, bank_base, top, roll: RollArrays,
              layout: StateLayout, relative: bool, picks: bool, rolls: bool):
  """The loop body of `turn_pass`: row top - i of every key of the batch,
  as a function (i, (rows, change, chosen, rolled)) -> the same."""
  farkle = row_step.farkle_term(roll, x_farkle)

  def body(i, carry):
    rows, res, chosen, rolled = carry
    k = rows.shape[-1]
    t = top - i
    value, new, pick = row_step.row(
        rows.reshape(-1, k), row_step.reached(t, roll, layout, jnp), farkle,
        row_step.bank_value(t, padded, bank_base, layout, jnp), roll, jnp,
        picks)
    if picks:
      chosen = jax.lax.dynamic_update_index_in_dim(chosen, pick, t, axis=0)
    rolled = (jax.lax.dynamic_update_index_in_dim(rolled, value, t, axis=0)
              if rolls else rolled)
    old = jax.lax.dynamic_index_in_dim(rows, t, keepdims=False)
    rows = jax.lax.dynamic_update_index_in_dim(rows, new, t, axis=0)
    return (rows, jnp.maximum(res, change_norm.largest(new, old, relative)),
            chosen, rolled)

  return body


def row_bytes(keys: int, roll: RollArrays, layout: StateLayout,
              tangent: bool = False) -> tuple[int, float]:
  """Bytes of one row step of `turn_pass` over a batch of `keys` keys:
  (gathered, as counted from the tables: every option's value, the bank
  value and the row's old values, twice with a tangent; accessed, by XLA's
  cost analysis of the compiled row body).

  Args:
    keys: the batch size k; roll: the roll tables (on the device).
    layout: the state layout.
    tangent: the body runs under a JVP in the farkle value (the ordered
      method without a penalty).
  """
  dtype = roll.set_weight.dtype
  size = jnp.dtype(dtype).itemsize
  options = sum(int(np.prod(g.rows.shape)) for g in roll.groups)
  S = layout.dice_states
  gathered = keys * (options + 2 + S) * size * (2 if tangent else 1)
  rows = jnp.zeros((layout.num_rows + 1, S, keys), dtype)
  x = jnp.zeros((keys,), dtype)
  base = jnp.zeros((keys,), jnp.int32)
  padded = jnp.zeros((layout.padded_size,), dtype)

  def one_row(rows, x, padded, base, roll):
    def row(x):
      body = _row_body(x, padded, base, jnp.asarray(layout.num_rows - 1),
                       roll, layout, False, False, False)
      return body(0, (rows, jnp.zeros((), dtype), rows[:0], rows[:0]))[0]
    if tangent:
      return jax.jvp(row, (x,), (jnp.ones_like(x),))
    return row(x)

  return gathered, sweep_counts.bytes_accessed(one_row, rows, x, padded,
                                               base, roll, donate=0)


def turn_exits(rows: jax.Array, chosen: jax.Array, padded: jax.Array,
               bank_base: jax.Array, top: jax.Array, roll: RollArrays,
               layout: StateLayout) -> tuple[jax.Array, jax.Array]:
  """How the turns of a batch of keys end under the policy their values
  imply (docs/model.md §4.2, the Newton correction): `forward_exits` with
  the two-player bank value.

  Args:
    rows: [T + 1, S, k] the final values of `turn_pass`; chosen: [T + 1,
      R, k] its picks.
    padded, bank_base, top, roll, layout: as for `turn_pass`.

  Returns:
    bank [T + 1, k]: probability of banking at each t (rows above a key's
    t_max bank into the goal); farkle [k]: probability of a farkle.
  """
  banked = lambda t: 1 - padded[layout.bank_position(bank_base, t, jnp)]
  return forward_exits(rows, chosen, banked,
                       layout.bank_floor_at(bank_base, jnp), top, roll)


def forward_exits(values: jax.Array, chosen: jax.Array,
                  banked: Callable[[jax.Array], jax.Array], floor: jax.Array,
                  top: jax.Array, roll: RollArrays, start=None
                  ) -> tuple[jax.Array, jax.Array]:
  """How turns end under the decisions their values imply, for any number
  of players (the decider's values alone decide).

  A forward pass over t carries the probability of reaching each in-turn
  state from (t = 0, the whole hand): where banking is chosen (bank >= the
  state's value, as the backward pass chose it) it leaves as a bank of t;
  otherwise a roll sends P_farkle to the farkle exit and each score set's
  share to its picked option. Mass that passes row `top` only wins.

  Args:
    values: [T + 1, S, k] the decider's final value of every in-turn state.
    chosen: [T + 1, R, k] int8 the option each score set takes (the first
      best; score sets in `roll.groups` order).
    banked: t -> [k] the decider's value of banking t.
    floor: [k] or [] the lowest bankable t; top: [] int32 the last row;
      start: [k] int32 each turn's first dice state (0-based), or S - 1.

  Returns:
    bank [T + 1, k]: probability of banking at each t; farkle [k]:
    probability of a farkle.
  """
  k, sets = values.shape[-1], chosen.shape[1]
  option = _OptionSources.of(roll)
  # Each row gathers what reaches it from the rows below (a pull): the same
  # sums as adding every option's share into its target row, without a
  # scatter, which XLA's CPU backend runs element by element.
  S = roll.dice_states
  rolled = jnp.zeros((values.shape[0] * S, k), values.dtype)
  start = _start_mass(start, S, k, values.dtype)
  flat_chosen = chosen.reshape(-1, k)

  def body(t, carry):
    rolled, bank, farkle = carry
    source = t - option.rows                                        # [O]
    valid = source >= 0
    source = jnp.maximum(source, 0)
    taken = flat_chosen[source * sets + option.set] == option.place[:, None]
    share = jnp.where(valid[:, None] & taken,
                      option.weight[:, None]
                      * rolled[source * S + option.dice], 0)        # [O, k]
    here = jnp.dot(option.lands, share,
                   precision=jax.lax.Precision.HIGHEST)             # [S, k]
    here = jnp.where(t == 0, start, here)
    value = jax.lax.dynamic_index_in_dim(values, t, keepdims=False)  # [S, k]
    banks = (t >= floor) & (banked(t)[None] >= value)
    bank = bank.at[t].set(jnp.where(banks, here, 0).sum(axis=0))
    out = jnp.where(banks, 0, here)
    farkle = farkle + jnp.dot(roll.farkle_prob, out,
                              precision=jax.lax.Precision.HIGHEST)
    rolled = jax.lax.dynamic_update_slice_in_dim(rolled, out, t * S, 0)
    return rolled, bank, farkle

  bank = jnp.zeros((values.shape[0], k), values.dtype)
  _, bank, farkle = jax.lax.fori_loop(
      0, top + 1, body, (rolled, bank, jnp.zeros((k,), values.dtype)))
  return bank, farkle


def _start_mass(start: jax.Array | None, S: int, k: int, dtype
                ) -> jax.Array:
  """[S, k] all of each turn's mass at its first dice state: `start` [k]
  (0-based), or the last, S - 1."""
  if start is None:
    return jnp.zeros((S, k), dtype).at[S - 1].set(1.0)
  return (jnp.arange(S)[:, None] == start[None]).astype(dtype)


class _OptionSources(NamedTuple):
  """Every option of every score set, as the forward pass reads it."""
  rows: jax.Array    # [O] int32 rows (points) the option adds
  dice: jax.Array    # [O] int32 dice index (n - 1) of its score set
  set: jax.Array     # [O] int32 its score set, in the order of the picks
  place: jax.Array   # [O] int8 its place among the set's options
  weight: jax.Array  # [O] probability of its score set
  lands: jax.Array   # [S, O] one-hot dice index of the state it leads to

  @classmethod
  def of(cls, roll: RollArrays) -> "_OptionSources":
    groups = roll.groups
    offset = jnp.concatenate([g.rows.reshape(-1) for g in groups])
    owner = np.concatenate([np.repeat(np.arange(g.rows.shape[0]),
                                      g.rows.shape[1]) for g in groups])
    owner += np.repeat(np.cumsum([0] + [g.rows.shape[0] for g in groups])
                       [:-1], [g.rows.size for g in groups])
    place = np.concatenate([np.tile(np.arange(g.rows.shape[1]),
                                    g.rows.shape[0]) for g in groups])
    dice = jnp.argmax(roll.set_weight > 0, axis=0)[owner]
    S = roll.dice_states
    gain = turn_row(offset, S)
    column = offset - flat_turn(gain, 1, S)             # next state - 1
    lands = column[None] == jnp.arange(S)[:, None]
    return cls(rows=gain, dice=dice, set=jnp.asarray(owner),
               place=jnp.asarray(place, jnp.int8),
               weight=roll.set_weight.sum(axis=0)[owner],
               lands=lands.astype(roll.set_weight.dtype))


def turn_values(w0: jax.Array, keys: np.ndarray, layout: StateLayout,
                roll: roll_tables.RollTables) -> np.ndarray:
  """Every in-turn value of some keys, rebuilt from the start values.

  Args:
    w0: [B, D, F, E] converged start-of-turn values.
    keys: [k] flat keys.
    layout: the state layout of the run.
    roll: roll tables of the rules.

  Returns:
    [T + 1, S, k] values (row T: the wins).
  """
  fields = layout.key_fields(keys)
  w0 = jnp.asarray(w0)
  rows = jnp.ones((layout.num_rows + 1, layout.dice_states, len(fields[0])),
                  w0.dtype)
  out, _ = compiled_turn_pass(
      rows, 1 - w0.reshape(-1)[layout.farkle_index(fields)],
      layout.padded_start(w0, jnp), jnp.asarray(layout.bank_base(fields)),
      jnp.asarray(int(layout.t_max(fields[0]).max()), jnp.int32),
      roll_arrays(roll, w0.dtype), layout=layout, relative=False)
  return np.asarray(out)


# `turn_pass` compiled for the queries of a solved run (one per set of
# shapes and static arguments, shared by every caller).
compiled_turn_pass = jax.jit(
    turn_pass, static_argnames=("layout", "relative", "picks", "rolls"))
