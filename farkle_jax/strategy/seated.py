"""One player with another strategy seated among optimal players, evaluated
exactly (docs/model.md §8).

The others play the N-player optimal strategy of a solved run (their
decisions maximize their own component of the solved values); the one
player (the *guest*) plays the same strategy (`"optimal"`, a check that
reproduces the solved values), the two-player optimal strategy against the
leading opponent (`"two_player"`: every decision as in a two-player game
against the highest other score, from a solved two-player run of the same
rules), or the maximum expected score of every turn (`"max_score"`: the
scores ignored, except that a bank or a scoring that wins is taken).

With every policy fixed the game is a Markov chain. Its states are the keys
together with the guest's seat j from the player to move, and its values
are solved in one ordered sweep: by score sum from the highest down, and in
each stage one turn pass per seat j followed by an exact solve of the
rotation cycles (a farkle moves (j, key) to (j - 1, the rotated key)). The
turn pass carries N + 2 channels: the value the mover decides on, the N
evaluated win probabilities, and the farkle probability. Rules without a
penalty only.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from farkle_jax.game import roll_tables, scoring
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, multiplayer, vector_pass
from farkle_jax.strategy import expected_score

GUESTS = ("two_player", "max_score", "optimal")
# The most games of `simulate`, a game at a time in Python (a few thousand
# games/s at goal 2,000 on 2 cores; the progress bar shows the ETA).
MAX_GAMES = 10**6
# Channel 0 of a won turn for a guest that plays by a table: above every
# preference (points), so a scoring that wins is always taken.
_TABLE_WIN = 1e9


class Inputs(NamedTuple):
  """What the decisions read, flat and device-resident."""
  solved: jax.Array   # [K + 1] the mover's value in every key after a turn
                      #   passes: component N - 1 of the solved vectors
  pair: jax.Array     # [B * B + 1] 1 - W2[d, b] of the two-player run
  lead: jax.Array     # [S, M] int32 highest other score of each stage key
  prefer: jax.Array   # [T + 1, 6] maximum expected score T(n, t), points
  banks: jax.Array    # [T + 1, 6] bool, the maximum-score bank decisions


class ScoreTable(NamedTuple):
  """The maximum-expected-score turn policy over the layout's rows."""
  prefer: np.ndarray  # [T + 1, 6] T(n, t) in points
  banks: np.ndarray   # [T + 1, 6] bool


def max_score_table(seats: SeatsLayout) -> ScoreTable:
  """The maximum-expected-score policy on rows 0 .. T of `seats`."""
  rules = seats.rules.replace(players=2)
  roll = roll_tables.build(rules)
  rows = seats.num_rows + 1
  sol = expected_score.solve(rules, roll)
  if sol.cap < rows - 1:   # a goal past the turn totals solved by default
    sol = expected_score.solve(rules, roll, cap=2 * rows * seats.unit)
  return ScoreTable(sol.expected[:rows], sol.bank[:rows])


def inputs(seats: SeatsLayout, w: np.ndarray, w2: np.ndarray | None,
           tables: multiplayer.SeatTables) -> Inputs:
  """Decision inputs from the solved N-player (`w` [key_shape + (N,)]) and
  two-player (`w2` [B, B, 1, 1], or None) start values."""
  n = seats.players
  keys = np.asarray(tables.keys)
  real = keys < seats.num_keys
  fields = seats.key_fields(np.where(real, keys, 0))
  lead = np.max(np.stack(fields[1:n]), axis=0)
  solved = np.append(w.reshape(-1, n)[:, n - 1], 0.0)
  w2 = np.zeros((seats.num_scores,) * 2) if w2 is None else w2
  pair = np.append(1 - w2.reshape(-1), 0.0)
  table = max_score_table(seats)
  return Inputs(jnp.asarray(solved), jnp.asarray(pair),
                jnp.asarray(lead, jnp.int32), jnp.asarray(table.prefer),
                jnp.asarray(table.banks))


def _seat_batch(x, inp, tables, s, u, j, guest_two, seats, group):
  """The batch of sub-batch u of stage s with the guest at seat j, and the
  bank values its turn pass reads."""
  n, B, K1 = seats.players, seats.num_scores, seats.num_keys + 1
  part = lambda a: jax.lax.dynamic_slice_in_dim(a[s], u * group, group)
  s0, base, target = part(tables.s0), part(tables.bank_base), part(
      tables.farkle)
  lead = part(inp.lead)
  after = ((j - 1) % n) * K1          # the guest's seat when the turn passes
  ahead = lambda pos: seats.from_next(x[after + pos].T, jnp)    # [N, k]
  if guest_two:   # decides as in a two-player game against the leader
    dec_farkle = inp.pair[lead * B + s0]
  else:
    dec_farkle = inp.solved[target]
  farkle = jnp.concatenate([dec_farkle[None], ahead(target),
                            jnp.ones_like(dec_farkle[None])], axis=0)

  def bank(t):
    wins = s0 + t >= B
    pos = jnp.where(wins, K1 - 1, base + t * seats.score_stride)
    if guest_two:
      dec = inp.pair[jnp.where(wins, B * B, lead * B + s0 + t)]
    else:
      dec = inp.solved[pos]
    values = jnp.where(wins[None], jnp.eye(n, 1, dtype=x.dtype), ahead(pos))
    out = jnp.concatenate([dec[None], values, jnp.zeros_like(dec[None])])
    return jnp.where(wins[None], out.at[0].set(1.0), out)

  batch = vector_pass.Batch(farkle=farkle, bank_base=base, s0=s0,
                            top=tables.top[s, u])
  return batch, bank


def _stage(x, inp, tables, s, roll, plan, guest: str):
  """Evaluates stage s for every guest seat (exact: one pass, cycles)."""
  seats, n, G = plan.seats, plan.seats.players, plan.group
  K1, M = seats.num_keys + 1, plan.batches * G
  win = jnp.zeros((n + 2,), x.dtype).at[0].set(1.0).at[1].set(1.0)
  table_win = win.at[0].set(_TABLE_WIN)
  cs, slopes = [], []
  for j in range(n):
    by_table = guest == "max_score" and j == 0
    policy = (inp.prefer, inp.banks) if by_table else None
    def one(u, out, j=j, policy=policy, by_table=by_table):
      batch, bank = _seat_batch(x, inp, tables, s, u, j,
                                guest == "two_player" and j == 0, seats, G)
      v = vector_pass.turn_pass(x, batch, roll, seats, bank=bank,
                                win=table_win if by_table else win,
                                policy=policy)
      read = batch.farkle[1:n + 1]
      c = v[1:n + 1] - v[n + 1][None] * read
      piece = jnp.concatenate([c, v[n + 1][None]], axis=0)
      return jax.lax.dynamic_update_slice_in_dim(out, piece, u * G, axis=1)
    out = jax.lax.fori_loop(0, plan.batches, one,
                            jnp.zeros((n + 1, M), x.dtype))
    cs.append(out[:n])
    slopes.append(out[n])
  partner = jnp.concatenate([((j - 1) % n) * M + tables.partner[s]
                             for j in range(n)])
  values = multiplayer.solve_cycles(jnp.concatenate(cs, axis=1),
                                    jnp.concatenate(slopes), partner, n)
  rows = jnp.concatenate([j * K1 + tables.keys[s] for j in range(n)])
  return x.at[rows].set(values.T)


_compiled_stage = jax.jit(_stage, static_argnames=("plan", "guest"),
                          donate_argnums=(0,))


def evaluate(seats: SeatsLayout, w: np.ndarray, w2: np.ndarray | None,
             guest: str = "two_player", group: int = 512) -> np.ndarray:
  """Win probabilities with the guest at each seat.

  Args:
    seats: the N-player layout (rules without a penalty).
    w: [key_shape + (N,)] the solved N-player start values.
    w2: [B, B, 1, 1] the solved two-player start values of the same rules
      (read by the `"two_player"` guest only; None for the others).
    guest: one of `GUESTS`.

  Returns:
    [N, key_shape, N]: for the guest at seat j from the player to move,
    every key's win probabilities (player to move first).
  """
  if guest not in GUESTS:
    raise ValueError(f"guest={guest!r}: one of {GUESTS}")
  if guest == "two_player" and w2 is None:
    raise ValueError("the two_player guest needs the two-player values w2")
  if seats.penalty > 0 or seats.past_goal:
    raise ValueError("a seated guest is evaluated for rules without a "
                     "farkle penalty or a final round only")
  n, K1 = seats.players, seats.num_keys + 1
  tables, plan = multiplayer.build(seats, group)
  inp = inputs(seats, w, w2, tables)
  roll = bellman.roll_arrays(roll_tables.build(seats.rules))
  x = jnp.full((n * K1, n), 1 / n)
  for s in range(tables.keys.shape[0]):
    x = _compiled_stage(x, inp, tables, jnp.int32(s), roll, plan, guest)
  x = np.asarray(x).reshape(n, K1, n)[:, :-1]
  return x.reshape((n,) + seats.key_shape + (n,))


class PairTurns(NamedTuple):
  """The two-player optimal strategy's turns, for play."""
  layout: StateLayout
  w2: np.ndarray      # [B, B, 1, 1] two-player start values
  rows: np.ndarray    # [T + 1, 6, B * B] every in-turn value


def pair_turns(rules, w2: np.ndarray) -> PairTurns:
  layout = StateLayout(rules.replace(players=2))
  rows = bellman.turn_values(w2, np.arange(layout.num_keys), layout,
                             roll_tables.build(layout.rules))
  return PairTurns(layout, w2, rows)


Guest = PairTurns | ScoreTable | None   # None: the optimal strategy


def simulate(game, guest: Guest, guest_seat: int, games: int,
             seed: int = 0,
             on_progress: Callable[[int, int], None] | None = None
             ) -> np.ndarray:
  """Plays `games` games from the opening with the guest (the two-player
  strategy of a `PairTurns`, the policy of a `ScoreTable`, or None:
  optimal) at absolute seat `guest_seat`; tells `on_progress` (games
  played, games) every 1,000 games.

  Returns:
    [N] how often each seat won.
  """
  if not 0 < games <= MAX_GAMES:
    raise ValueError(f"games={games}: from 1 to {MAX_GAMES:,}")
  rng = np.random.default_rng(seed)
  n = game.seats.players
  turns: dict = {}
  wins = np.zeros(n)
  for game_no in range(games):
    if on_progress is not None and game_no % 1000 == 0:
      on_progress(game_no, games)
    scores, mover = [0] * n, 0
    while True:
      rel = tuple(scores[(mover + i) % n] for i in range(n))
      rule = _decisions(game, turns, rel,
                        guest if mover == guest_seat else None)
      scores[mover] += _play_turn(game, rel, rng, *rule)
      if scores[mover] >= game.rules.goal:
        wins[mover] += 1
        break
      mover = (mover + 1) % n
  return wins


def _decisions(game, turns: dict, rel: tuple, guest: Guest):
  """(value(t, m), banks(t, m)) of the mover's strategy at scores `rel`:
  the preference for reaching turn total t with m dice, and whether to
  bank there."""
  seats = game.seats
  if guest is None:
    if rel not in turns:
      turns[rel] = game.turn(rel)
    turn = turns[rel]
    value = lambda t, m: turn.rows[min(t, seats.num_rows), m - 1][0]
    return value, lambda t, m: game.bank_value(turn, t)[0] >= value(t, m)
  if isinstance(guest, ScoreTable):
    t_max = seats.t_max(seats.index_of(rel[0]))
    value = lambda t, m: (_TABLE_WIN if t > t_max
                          else guest.prefer[t, m - 1])
    return value, lambda t, m: bool(guest.banks[t, m - 1])
  lay = guest.layout
  b, d = lay.index_of(rel[0], "b"), lay.index_of(max(rel[1:]), "d")
  key = lay.key_index(b, d, 0, 0)
  value = lambda t, m: guest.rows[min(t, lay.num_rows), m - 1, key]
  bank = lambda t: (1.0 if b + t >= lay.num_scores
                    else 1 - guest.w2[d, b + t, 0, 0])
  return value, lambda t, m: bank(t) >= value(t, m)


def _play_turn(game, rel: tuple, rng, value, banks) -> int:
  """One turn from banked scores `rel` (points, mover first) played by
  `_decisions`; returns the points banked (0 after a farkle)."""
  seats, unit = game.seats, game.seats.unit
  s0 = seats.index_of(rel[0])
  t_max, least = seats.t_max(s0), seats.bank_floor(s0)
  t, dice = 0, 6
  chances = ([float(p) for p in game.rules.face_chances]
             if game.rules.dice else None)
  while True:
    faces = (rng.integers(1, 7, dice) if chances is None
             else rng.choice(6, dice, p=chances) + 1)
    counts = tuple(int((faces == f).sum()) for f in range(1, 7))
    options = scoring.keeps(game.rules, counts)
    if not options:
      return 0
    kept, points = max(options, key=lambda o: value(
        t + o[1] // unit, roll_tables.next_dice(dice, sum(o[0]))))
    t, dice = t + points // unit, roll_tables.next_dice(dice, sum(kept))
    if t > t_max:
      return t * unit
    if t >= least and banks(t, dice):
      return t * unit
