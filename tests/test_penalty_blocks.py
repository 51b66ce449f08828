"""The N-player sweep under a penalty, a block at a time: the farkle-graph
solve against a dense linear solve, the block tables against the layout,
and the whole solve against the plain reference."""

import itertools

import numpy as np
import pytest

import reference
from conftest import crash_in_sweeps
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import configuration, driver, multiplayer
from farkle_jax.solver import penalty_blocks, seat_sweep, stage_engine


def _dense(c, a, partner, n):
  """The same system as one dense solve over all N * M unknowns."""
  N, M = c.shape
  A = np.zeros((N * M, N * M))
  for k in range(M):
    for i in range(N):   # x_k[i] reads a_k * x_partner(k)[i - 1 mod N]
      A[i * M + k, ((i - 1) % n) * M + partner[k]] += a[k]
  return np.linalg.solve(np.eye(N * M) - A, c.reshape(-1)).reshape(N, M)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_farkle_graph_is_solved_exactly(players):
  """Chains, cycles of every length and keys that read nothing, with
  slopes up to 0.97: as a dense solve of the same system."""
  rng = np.random.default_rng(players)
  M = 60
  partner = rng.integers(0, M, M)
  partner[:10] = np.arange(1, 11) % 10   # one cycle of 10
  partner[10] = 10                       # a key reading itself
  a = rng.uniform(0, 0.97, M)
  a[11:14] = 0                           # reading nothing of the system
  partner[11:14] = np.arange(11, 14)
  c = rng.uniform(size=(players, M))
  got = penalty_blocks.solve_chains(c, a, partner, players)
  np.testing.assert_allclose(got, _dense(c, a, partner, players), rtol=0,
                             atol=1e-13)


def test_block_tables_point_at_the_farkle_target_in_the_block():
  seats = SeatsLayout(rules_lib.facebook(goal=600, floor=-300).replace(
      players=3))
  tables, _ = multiplayer.build(seats, 64)
  keys, farkle = np.asarray(tables.keys), np.asarray(tables.farkle)
  chain = np.asarray(tables.chain)
  per, M = seats.stages_per_block, keys.shape[1]
  stage = seats.stage(seats.key_fields())
  rows = np.broadcast_to(np.arange(len(keys))[:, None], keys.shape)
  real = keys < seats.num_keys
  same = real & (stage[np.minimum(farkle, seats.num_keys - 1)] // per
                 == rows // per)
  assert (same == (chain >= 0)).all() and same.any()
  # Some in-block targets lie in a later stage (penalties near the floor).
  later = same & (chain // M > rows % per)
  assert later.any()
  block_keys = keys.reshape(-1, per * M)[rows[same] // per, chain[same]]
  np.testing.assert_array_equal(block_keys, farkle[same])


def test_first_sweep_reads_of_later_blocks_come_from_blocks_before():
  """A penalty farkle into a later block reads, in the first sweep, its
  target with scores raised into the block before the reader's: the same
  farkle counts, no score past the goal, solved before the reader."""
  seats = SeatsLayout(rules_lib.facebook(goal=600, floor=-300).replace(
      players=3))
  tables, _ = multiplayer.build(seats, 64)
  keys, farkle = np.asarray(tables.keys), np.asarray(tables.farkle)
  first = np.asarray(tables.first_farkle)
  per, K = seats.stages_per_block, seats.num_keys
  stage = seats.stage(seats.key_fields())
  rows = np.broadcast_to(np.arange(len(keys))[:, None], keys.shape)
  moved = first != farkle
  assert moved.sum() > 1000
  assert (stage[first[moved]] // per < rows[moved] // per).all()
  later = (keys < K) & (stage[np.minimum(farkle, K - 1)] // per
                        > rows // per)
  assert not (moved & ~later).any()
  assert (stage[first[moved]] // per == rows[moved] // per - 1).all()
  got, want = (np.array(seats.key_fields(x[moved])) for x in (first, farkle))
  n = seats.players
  np.testing.assert_array_equal(got[n:], want[n:])
  assert (got[:n] >= want[:n]).all()


def _solve(tmp_path, goal, floor, players=3, **rules):
  config = configuration.base("facebook")
  config.rules.update(goal=goal, floor=floor, players=players, **rules)
  config.solver.update(tol=1e-14, norm="absolute")
  summary = driver.run(config, str(tmp_path))
  return summary, np.load(tmp_path / "start_values.npy")


def test_three_players_with_a_penalty_agree_with_the_plain_reference(
    tmp_path):
  """The reference's value iteration, started from the solver's values,
  leaves them where they are to 1e-12: they are its fixed point (from 1/3
  everywhere it reaches the same values, in the thorough tier below)."""
  summary, w = _solve(tmp_path, 300, -150)
  assert summary["converged"]
  ref, it = reference.solve_players_penalty(3, 300, -150, tol=1e-12,
                                            start=w)
  assert it == 1
  np.testing.assert_allclose(ref, w, rtol=0, atol=1e-12)
  assert np.abs(w.sum(-1) - 1).max() < 1e-12 and w.min() >= 0


@pytest.mark.thorough
def test_three_players_with_a_penalty_match_the_reference_from_scratch(
    tmp_path):
  summary, w = _solve(tmp_path, 300, -150)
  ref, _ = reference.solve_players_penalty(3, 300, -150)
  np.testing.assert_allclose(w, ref, rtol=0, atol=1e-12)


def test_a_final_round_under_a_penalty_agrees_with_the_reference(tmp_path):
  """Facebook rules with a final round (cap 300): the reference's own last
  turns (its recursion over chaser, running total and dice, bank minimum
  300) and value iteration, started from the solver's values, leave them
  where they are to 1e-12 (from 1/3 everywhere: 64 iterations, 62 s, the
  same values to 2e-15, in the thorough tier below)."""
  summary, w = _solve(tmp_path, 300, -150, final_round=True,
                      final_round_cap=300)
  assert summary["converged"]
  ref, it = reference.solve_players_penalty(3, 300, -150, tol=1e-12,
                                            start=w, cap=300)
  assert it == 1
  np.testing.assert_allclose(ref, w, rtol=0, atol=1e-12)
  plain, _ = reference.solve_players_penalty(3, 300, -150, max_iter=1,
                                             start=w)
  assert np.abs(plain - w).max() > 0.1   # the rule matters


@pytest.mark.thorough
def test_a_final_round_under_a_penalty_matches_the_reference_from_scratch(
    tmp_path):
  _, w = _solve(tmp_path, 300, -150, final_round=True, final_round_cap=300)
  ref, _ = reference.solve_players_penalty(3, 300, -150, cap=300)
  np.testing.assert_allclose(w, ref, rtol=0, atol=1e-12)


def _with_flags(w, players, floor, counts=3):
  """The seat engine's values [B] * N + [F] * N + [N] as the reference's
  W0[s.., f.., g.., i] (scores from the floor, g = 1 on the board): the
  scores off the board come first, 0 and what penalties leave of it
  (here the floor alone), then those on it. The reference's keys that no
  play reaches (off the board with a positive score) stay at 1/N."""
  off = sorted({max(floor, -500 * k) for k in range(-floor // 500 + 2)})
  on = (w.shape[0] - len(off))
  score = np.array([(x - floor) // 50 for x in off] + list(range(on)))
  flag = np.array([0] * len(off) + [1] * on)
  out = np.full((on,) * players + (counts,) * players + (2,) * players
                + (players,), 1 / players)
  grid = np.meshgrid(*(np.arange(len(score)),) * players, indexing="ij")
  for f in itertools.product(range(counts), repeat=players):
    out[tuple(score[g] for g in grid) + f + tuple(flag[g] for g in grid)] = (
        w[(slice(None),) * players + f])
  return out


@pytest.mark.parametrize("cap, counts", [(None, 2), pytest.param(
    None, 3, marks=pytest.mark.thorough), pytest.param(
        300, 3, marks=pytest.mark.thorough)])
def test_an_entry_minimum_under_a_penalty_agrees_with_the_reference(
    tmp_path, cap, counts):
  """Three players who must bank 350 to get on the board, with `counts`
  farkles in a row costing 500 before or after (the reference carries an
  explicit on-board flag per player): its value iteration, started from
  the seat engine's values, leaves them where they are to 1e-12. Three
  farkles and the final round (cap 300) in the thorough tier."""
  rules = dict(entry_minimum=350, penalty_count=counts)
  if cap:
    rules.update(final_round=True, final_round_cap=cap)
  summary, w = _solve(tmp_path / "entry", 400, -150, **rules)
  assert summary["converged"] and w.shape[:3] == (13, 13, 13)
  start = _with_flags(w, 3, -150, counts)
  ref, _ = reference.solve_players_penalty(
      3, 400, -150, counts, max_iter=1, start=start, entry=350, cap=cap)
  reached = start[..., 0] != 1 / 3   # what play reaches reads nothing else
  np.testing.assert_allclose(ref[reached], start[reached], rtol=0,
                             atol=1e-12)
  del rules["entry_minimum"]
  _, plain = _solve(tmp_path / "plain", 400, -150, **rules)
  assert np.abs(w[1, 1, 1] - plain[0, 0, 0]).max() > 1e-3   # it matters


def test_a_crash_within_a_block_sweep_loses_nothing(tmp_path, monkeypatch):
  """Three players under a penalty, stopped in the second sweep after a
  checkpoint at every block: the resumed run ends where an uninterrupted
  one does, in as many sweeps."""
  config = configuration.base("facebook")
  config.rules.update(goal=300, floor=-150, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  fresh = driver.run(config, str(tmp_path / "fresh"))
  seats = SeatsLayout(configuration.check(config)[0])
  blocks = len(seats.stage_sizes()) // seats.stages_per_block
  # Sweep 2 saves after every block and stops before its last one.
  restore_step = crash_in_sweeps(monkeypatch, seat_sweep,
                                 "compiled_steps", save_from=blocks + 1,
                                 crash_at=2 * blocks - 1)
  workdir = str(tmp_path / "crash")
  with pytest.raises(KeyboardInterrupt):
    driver.run(config, workdir)
  restore_step()
  monkeypatch.setattr(stage_engine, "SAVE_SECONDS", 300)
  restore, found = stage_engine.StageEngine.restore, []
  monkeypatch.setattr(stage_engine.StageEngine, "restore",
                      lambda *a: found.append(restore(*a)) or found[-1])
  summary = driver.run(config, workdir)
  at = found[0].state.stage   # within sweep 2, at a block's start
  assert found[0].iteration == 1 and 0 < at < len(seats.stage_sizes())
  assert at % seats.stages_per_block == 0 and blocks > 3
  assert summary["iterations"] == fresh["iterations"]
  np.testing.assert_allclose(summary["seat_win"], fresh["seat_win"],
                             rtol=0, atol=1e-15)
