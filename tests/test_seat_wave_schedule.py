"""The wavefront's schedule for N players: every bank reads a key that
finished at an earlier step, every farkle one that finishes with it (or,
under a penalty, later), the live keys counted from the sizes are those of
every key, and a sweep takes far fewer dependent steps than the stage
engine's."""

import dataclasses

import numpy as np
import pytest

from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import seat_counts, seat_wave_schedule, wave_schedule


def _seats(players=3, **rules):
  base = rules.pop("base", rules_lib.minimal)
  return SeatsLayout(dataclasses.replace(base(**rules), players=players))


def _per_key(seats):
  """(fields, [K] finish, [K] start) of every key, from its own fields."""
  fields = seats.key_fields()
  sums = sum(np.asarray(s, np.int64) for s in seats.scores_of(fields))
  x = seats.players * (seats.num_scores - 1) - sums
  finish = x + x // seats.bank_min
  start = finish - np.asarray(seats.t_max(fields[0]), np.int64)
  return fields, finish - start.min(), start - start.min()


@pytest.mark.parametrize("players, rules", [
    (3, {"goal": 1000}),
    (4, {"goal": 600}),
    (3, {"base": rules_lib.facebook, "goal": 800, "floor": -300}),
])
def test_live_keys_from_the_sizes_are_every_keys(players, rules):
  seats = _seats(players, **rules)
  _, finish, start = _per_key(seats)
  np.testing.assert_array_equal(seat_wave_schedule.live_keys(seats),
                                wave_schedule.live_keys(start, finish))


@pytest.mark.parametrize("players, rules", [
    (3, {"goal": 1000}),
    (3, {"base": rules_lib.facebook, "goal": 800, "floor": -300}),
])
def test_banks_read_finished_keys_and_farkles_their_own_step(players, rules):
  """A bank of t from a key, at the step the key processes row t, reads a
  key finished at an earlier step (or a win); a farkle reads the next
  player's key, which finishes at the same step (the scores rotated) or,
  after a penalty, at a later one (read at its previous value)."""
  seats = _seats(players, **rules)
  fields, finish, _ = _per_key(seats)
  B = seats.num_scores
  t_max = np.asarray(seats.t_max(fields[0]))
  checked = 0
  for t in range(1, int(t_max.max()) + 1):
    banks = (t >= seats.bank_floor(fields[0])) & (t <= t_max)
    target = seats.after_bank(fields, t)
    inside = banks & (np.asarray(target[seats.players - 1]) < B)
    key = seats.key_index(tuple(np.asarray(f)[inside] for f in target))
    assert (finish[key] < finish[inside] - t).all()
    checked += inside.sum()
  assert checked > seats.num_keys   # banks of many turn totals
  farkle = seats.key_index(seats.farkle_fields(fields))
  same = finish[farkle] == finish
  assert same.any() and (finish[farkle][~same] > finish[~same]).all()
  assert same.all() == (seats.penalty == 0)


def test_a_sweep_counted_against_the_stage_engines():
  """The tiny three-player Facebook game: its live rows are the model's
  key-rows (states / 6), and a sweep takes about a thirtieth of the stage
  engine's dependent steps and under a third of its bytes (each distinct
  target's ring row read once a column, where a stage pass reads every
  option's value and mass)."""
  seats = _seats(3, base=rules_lib.facebook, goal=1000, floor=-500)
  wave = seat_wave_schedule.plan(seats)
  stage = seat_counts.sweep(seats, 2048).counts
  c = wave.counts
  assert c.live_rows * 6 == seats.num_states
  assert c.live_rows <= c.column_steps < 2 * c.live_rows
  assert 30 * c.dependent_steps < stage.dependent_steps
  assert 3 * (c.gathered_bytes + c.written_bytes) < (
      stage.gathered_bytes + stage.written_bytes)
  assert wave.span == len(seat_wave_schedule.live_keys(seats))
  # Two devices: half the rings each, the start vectors whole on both.
  two = seat_wave_schedule.plan(seats, devices=2)
  assert wave.vector_bytes == two.vector_bytes == seats.num_keys * 3 * 8
  assert two.device_bytes == two.vector_bytes + two.ring_bytes // 2
  # A column's ring: the largest gain of one roll (4,000 points, 80
  # units) plus one rows, of six dice states and three channels.
  assert wave.ring_bytes == 2 * max(wave.widths) * 81 * 6 * 3 * 8
