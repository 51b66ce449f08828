"""The wavefront method: its schedule keeps every dependency of the ordered
method, and its values agree with the baseline and the plain reference."""

import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import N_DICE, StateLayout
from farkle_jax.solver import (bellman, methods, wave_counts, wave_row,
                               wave_schedule, wavefront)
from test_ordered import GAMES, _solve, baseline, settings


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_wavefront_agrees_with_baseline_and_reference(name):
  wave, _ = _solve("wavefront", GAMES[name])
  base, _ = baseline(name)
  np.testing.assert_allclose(wave, base, rtol=0, atol=1e-12)
  ref, _ = reference.solve(name, 1000, -500)
  np.testing.assert_allclose(wave, ref, rtol=0, atol=1e-12)


def _built(rules, segments=None):
  layout = StateLayout(rules)
  roll = bellman.roll_arrays(roll_tables.build(rules))
  tables, plan = wavefront.build(layout, roll, relative=True,
                                 segments=segments)
  tab = {k: np.asarray(v) for k, v in tables._asdict().items()}
  tab["segments"] = [wavefront.segment_keys(tables, plan, m)
                     for m in range(len(plan.widths))]
  return layout, plan, tab


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_every_bank_reads_a_start_value_finished_earlier(name):
  layout, plan, tab = _built(GAMES[name])
  K = layout.num_keys
  finish, t_max = tab["finish"][:K], tab["t_max"][:K]
  b, d, f, e = layout.key_fields()
  for t in range(layout.bank_min, layout.num_rows):
    live = t <= t_max
    target = (d, b + t, e, np.zeros_like(e))
    inside = live & (b + t < layout.num_scores)
    k2 = layout.key_index(*(x[inside] for x in target))
    # Row t of a key runs at step finish - t, after its target finished.
    assert np.all(finish[k2] < finish[inside] - t)
  assert plan.span == finish.max() + 1


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_columns_run_every_live_row_once(name):
  """Walking each segment's columns as the sweep does (a pointer that moves
  on once its key has finished), every key is in a column at every step
  from its start to its finish, and no column holds two live keys."""
  layout, plan, tab = _built(GAMES[name], segments=4)
  K = layout.num_keys
  finish, t_max = tab["finish"][:K], tab["t_max"][:K]
  start = finish - t_max
  seen = np.zeros(K, np.int64)
  # facebook's game is large enough to cut (minimal's fits one chunk)
  assert len(plan.widths) > 1 or name == "minimal"
  for m, (col_keys, _) in enumerate(tab["segments"]):
    assert col_keys.shape[0] == plan.widths[m]
    pointer = np.zeros(len(col_keys), np.int64)
    for tau in range(plan.bounds[m], plan.bounds[m + 1]):
      key = col_keys[np.arange(len(col_keys)), pointer]
      pad = np.append(finish, -1)
      pointer = np.minimum(pointer + (pad[key] < tau), col_keys.shape[1] - 1)
      key = col_keys[np.arange(len(col_keys)), pointer]
      live = key[(key < K)]
      live = live[(start[live] <= tau) & (finish[live] >= tau)]
      assert len(set(live.tolist())) == len(live)
      seen[live] += 1
      should = np.nonzero((start <= tau) & (finish >= tau))[0]
      assert set(live.tolist()) == set(should.tolist())
  np.testing.assert_array_equal(seen, t_max + 1)


def test_rings_move_with_their_keys_between_segments():
  layout, plan, tab = _built(GAMES["facebook"], segments=4)
  K = layout.num_keys
  finish, t_max = tab["finish"][:K], tab["t_max"][:K]
  start = finish - t_max
  for m in range(1, len(plan.widths)):
    a = plan.bounds[m]
    before = tab["segments"][m - 1][0]
    after, carry = tab["segments"][m]
    for c in range(after.shape[0]):
      key = after[c, 0]
      if key < K and start[key] < a:   # goes on from the segment before
        assert key in before[carry[c]]


def test_segments_cut_where_the_idle_columns_cost_least():
  rng = np.random.default_rng(3)
  live = rng.integers(1, 50, 12)
  cuts = wave_schedule.cut_segments(live, 3, move=2.0)
  cost = lambda cuts: sum(live[a:b].max() * (b - a + (2.0 if a else 0))
                          for a, b in zip(cuts[:-1], cuts[1:]))
  import itertools
  best = min(cost([0, *inner, 12]) for k in range(3)
             for inner in itertools.combinations(range(1, 12), k))
  assert cut_ok(cuts, 12) and cost(cuts) == best


def cut_ok(cuts, n):
  return cuts[0] == 0 and cuts[-1] == n and all(
      a < b for a, b in zip(cuts[:-1], cuts[1:]))


def test_a_row_reads_each_distinct_target_once():
  roll = bellman.roll_arrays(roll_tables.build(rules_lib.facebook()))
  row = bellman.row_plan(roll)
  # Every option of every score set, as (gain, next dice) through the plan,
  # is the option of the roll tables, and the targets are distinct.
  plan_options = sorted(
      tuple(sorted((row.gains[i], row.dice[i]) for i in options))
      for n in row.sets for group in n for options in group)
  table_options = sorted(
      tuple(sorted((int(o) // 6, int(o) % 6) for o in options))
      for g in roll.groups for options in np.asarray(g.rows))
  assert plan_options == table_options
  assert len(set(zip(row.gains, row.dice))) == row.num_targets == 102
  assert row.num_options == 823
  weight = np.asarray(roll.set_weight).sum(axis=1)
  np.testing.assert_allclose([sum(w) for w in row.weights], weight,
                             rtol=0, atol=1e-14)


def test_sweep_bytes_follow_the_live_rows():
  layout, plan, _ = _built(rules_lib.facebook(goal=3000, floor=-1000))
  moved = wave_counts.sweep_bytes(plan, "float64")
  assert moved.live_rows * N_DICE == layout.num_states
  assert moved.live_rows <= moved.column_steps < 1.5 * moved.live_rows
  values_only = wave_row.column_bytes(plan.row, 8, sloped=False)[0]
  with_slopes = wave_row.column_bytes(plan.row, 8)[0]
  # Each segment's columns take their rings along (values and slopes).
  rings = sum(plan.ring_rows * N_DICE * (8 * w + 4 * ws) + 4 * w
              for w, ws in zip(plan.widths, plan.sloped))
  assert (moved.column_steps * values_only + rings < moved.gathered
          < moved.column_steps * with_slopes + rings + 64 * layout.num_keys)


@pytest.mark.parametrize("tile", [32, 128])
def test_the_kernel_computes_the_tiles_that_hold_a_live_column(tile):
  """`wave_counts.busy_rows` against walking the columns as the sweep
  does: at each step, the tiles of `tile` columns with a live key (what
  the fused kernel computes; it skips the others)."""
  layout = StateLayout(GAMES["facebook"])
  roll = bellman.roll_arrays(roll_tables.build(layout.rules))
  tables, plan = wavefront.build(layout, roll, relative=True, segments=4)
  finish, t_max = np.asarray(tables.finish), np.asarray(tables.t_max)
  rows = sloped = 0
  for m in range(len(plan.widths)):
    col_keys = wavefront.segment_keys(tables, plan, m)[0]
    columns = np.arange(len(col_keys))
    pointer = np.zeros(len(col_keys), np.int64)
    for tau in range(plan.bounds[m], plan.bounds[m + 1]):
      key = col_keys[columns, pointer]
      pointer = np.minimum(pointer + (finish[key] < tau),
                           col_keys.shape[1] - 1)
      t = finish[col_keys[columns, pointer]] - tau
      live = (t >= 0) & (t <= t_max[col_keys[columns, pointer]])
      busy = live.reshape(-1, tile).any(axis=1)
      rows += int(busy.sum()) * tile
      sloped += int(busy[:plan.sloped[m] // tile].sum()) * tile
  got = wave_counts.busy_rows(tables, plan, tile)
  assert got == (rows, sloped)
  assert (layout.num_states // N_DICE <= got.rows
          < np.dot(np.diff(plan.bounds), plan.widths))


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_slopes_are_kept_for_the_keys_whose_farkle_finishes_with_them(name):
  layout, plan, tab = _built(GAMES[name], segments=3)
  K = layout.num_keys
  farkle = layout.key_index(*layout.farkle_fields(layout.key_fields()))
  with_partner = tab["finish"][farkle] == tab["finish"][:K]
  for m, (col_keys, _) in enumerate(tab["segments"]):
    # The sloped columns, whole chunks, hold every key that needs slopes
    # (first, then the others).
    ws = plan.sloped[m]
    assert ws % plan.chunk == 0 and plan.widths[m] % plan.chunk == 0
    outside = col_keys[ws:][col_keys[ws:] < K]
    assert not with_partner[outside].any()
    first = col_keys[:, 0]
    needs = with_partner[np.minimum(first, K - 1)] & (first < K)
    others = ~with_partner[np.minimum(first, K - 1)] & (first < K)
    if needs.any() and others.any():
      assert np.nonzero(needs)[0].max() < np.nonzero(others)[0].min()
  # Every group's partners are keys in sloped columns.
  partner = tab["partner"]
  keys = tab["group_keys"]
  assert with_partner[keys[(partner >= 0) & (keys < K)]].all()
  if name == "minimal":   # without a penalty every farkle swaps the players
    assert with_partner.all()
  else:
    assert 0.5 < with_partner.mean() < 0.8


def test_finishing_groups_are_the_score_sums():
  layout, _, tab = _built(GAMES["facebook"])
  b, d, _, _ = layout.key_fields()
  for keys in tab["group_keys"]:
    keys = keys[keys < layout.num_keys]
    assert len(set((b + d)[keys].tolist())) <= 1


def test_far_fewer_dependent_steps_than_the_ordered_method():
  from farkle_jax.solver import ordered
  layout = StateLayout(rules_lib.facebook(goal=3000, floor=-1000))
  roll = bellman.roll_arrays(roll_tables.build(layout.rules))
  _, plan = wavefront.build(layout, roll, relative=True)
  stages, _ = ordered.build(layout, relative=True, b_group=16)
  top = np.asarray(stages.top)
  ordered_steps = np.maximum(np.maximum(top + 1, 1).sum(axis=1), 1).sum()
  # Wave steps, each cut into at most a few chunk iterations.
  assert plan.span * 20 < ordered_steps
  assert plan.span <= plan.steps <= plan.span * wave_schedule.CHUNKS
  assert plan.steps * 4 < ordered_steps


@pytest.mark.parametrize("name", ["facebook", "minimal"])
def test_first_sweep_guesses_are_keys_solved_before_each_row(name):
  """A run's first sweep reads each penalty farkle, at every row of the
  turn, at a key solved before that row runs: of the target's farkle
  counts, neither score lower than the target's."""
  layout, plan, tab = _built(GAMES[name])
  K = layout.num_keys
  stale, finish, solved = tab["stale"][:K], tab["finish"], tab["solved"]
  position, farkle = tab["position"][:K], tab["farkle"][:K]
  if name == "minimal":   # no penalty: every farkle target finishes along
    assert not stale.any()
    return
  assert 0.2 < stale.mean() < 0.5
  key_at = np.full(layout.padded_size, -1)
  key_at[position] = np.arange(K)
  # The stale reads are those of targets that finish later.
  assert np.all(finish[key_at[farkle[stale]]] > finish[:K][stale])
  t_max = tab["t_max"][:K]
  fields = np.stack(layout.key_fields(), axis=1)
  guessed = total = 0
  for t in range(layout.num_rows):
    keys = np.flatnonzero(stale & (t <= t_max))
    tau = finish[keys] - t
    has = solved[tau] >= 0
    keys, tau = keys[has], tau[has]
    guess = key_at[layout.raised_key(farkle[keys], solved[tau])]
    target = key_at[farkle[keys]]
    assert np.all(guess >= 0) and np.all(finish[guess] < tau)
    assert np.all(fields[guess] >= fields[target])
    np.testing.assert_array_equal(fields[guess, 2:], fields[target, 2:])
    guessed, total = guessed + has.sum(), total + has.size
  assert guessed >= 0.95 * total


def test_first_sweep_guesses_start_closer():
  """The guesses change where the iteration starts: the first sweep lands
  closer to the fixed point than from the initial values alone (that the
  iteration ends at the reference's values, guesses and all, the tests
  above show)."""
  rules = rules_lib.facebook(floor=-500, goal=1000)
  built = methods.build(StateLayout(rules), roll_tables.build(rules),
                        settings(method="wavefront", tol=1e-13))
  ignored = built._replace(tables=built.tables._replace(
      stale=np.zeros_like(built.tables.stale)))
  first = {}
  for name, method in (("guessed", built), ("ignored", ignored)):
    chunk = methods.compile_chunk(method, settings(tol=1e-13))
    one = chunk.run(chunk.method.init(), float("inf"), 1)
    first[name] = chunk.method.start_values(one.state)
  last = chunk.method.start_values(
      chunk.run(one.state, one.residual, 200).state)
  error = {k: np.abs(first[k] - last).max() for k in first}
  assert error["guessed"] < 0.5 * error["ignored"]
