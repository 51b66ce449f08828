"""The wavefront for N players: its sweeps reach the plain reference's
values (three players to 300 and 500, four to 300; an entry minimum; a
final round, ties to the leader or shared; a penalty) and the stage
engine's; dice that differ are refused in one line."""

import dataclasses
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (bellman, configuration, driver, multiplayer,
                               seat_wave_counts, seat_wave_engine,
                               seat_wavefront, wave_kernel)
from farkle_jax.solver.memory import MemoryRefused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sweep = jax.jit(seat_wavefront.sweep, static_argnames="plan")


def _solved(rules, sweeps: int = 10, tol: float = 1e-14):
  """(start vectors [K, N], the changes of each sweep) from 1/N."""
  seats = SeatsLayout(rules)
  tables, plan = seat_wavefront.build(
      seats, bellman.roll_arrays(roll_tables.build(rules)), relative=False)
  w0, changes = multiplayer.initial_values(seats), []
  while len(changes) < sweeps and (not changes or changes[-1] >= tol):
    w0, change = sweep(w0, tables, plan=plan, fresh=not changes)
    changes.append(float(change))
  return np.asarray(w0)[:-1], changes


@pytest.mark.parametrize("players, goal", [
    (3, 300), (4, 300), pytest.param(3, 500, marks=pytest.mark.thorough)])
def test_sweeps_reach_the_plain_reference(players, goal):
  """Two sweeps, as the stage engine: the first from 1/N, exact where the
  policies then hold (each score sum's rotation cycles solved in closed
  form), the second confirming."""
  rules = dataclasses.replace(rules_lib.minimal(goal=goal), players=players)
  w, changes = _solved(rules)
  ref, _ = reference.solve_players(players, goal)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)
  assert len(changes) == 2 and changes[-1] < 1e-14 < changes[0]
  assert np.abs(w.sum(-1) - 1).max() < 1e-12


@pytest.mark.thorough
def test_a_game_with_a_cycle_without_a_pure_equilibrium_alternates():
  """Three players to 1,500 hold rotation cycles whose policies alternate
  between two profiles (docs/model.md §8): the stage engine keeps their
  midpoint; the wavefront's sweeps alternate too, their changes not
  falling (its limit, said in its docs)."""
  rules = dataclasses.replace(rules_lib.minimal(goal=1500), players=3)
  _, changes = _solved(rules, sweeps=8)
  assert min(changes[4:]) > 1e-5
  assert changes[-1] > 0.3 * changes[-3]


@pytest.mark.parametrize("players, goal, rules, asked", [
    (3, 300, {"entry_minimum": 200}, {"entry": 200}),
    (3, 300, {"final_round": True, "final_round_cap": 200}, {"cap": 200}),
    (3, 300, {"final_round": True, "final_round_cap": 200,
              "final_round_ties": "shared"}, {"cap": 200, "ties": "shared"}),
    (4, 250, {"final_round": True, "final_round_cap": 100}, {"cap": 100}),
])
def test_an_entry_minimum_and_a_final_round_reach_the_reference(
    players, goal, rules, asked):
  """The bank's floor and what a bank at the goal reads (the last turns'
  table under a final round) are the stage engine's own."""
  rules = dataclasses.replace(rules_lib.minimal(goal=goal), players=players,
                              **rules)
  w, changes = _solved(rules)
  ref, _ = reference.solve_players(players, goal, **asked)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)
  assert len(changes) == 2


def test_a_penalty_reaches_the_reference():
  """Facebook rules, three players to 300 (floor -150): a farkle raises
  the mover's count (the next player's key, the same sum: solved in the
  group, along chains) until the penalty lowers a score (a later group,
  read at its last value); the sweeps converge to the reference's values
  (five sweeps: the later groups' values travel a sweep at a time). The
  reference's value iteration, started from them, leaves them where they
  are: they are its fixed point (from 1/3 everywhere it reaches them too:
  the thorough test below)."""
  rules = dataclasses.replace(rules_lib.facebook(goal=300, floor=-150),
                              players=3)
  w, changes = _solved(rules, sweeps=20)
  shape = (9,) * 3 + (3,) * 3 + (3,)   # scores -150..250, farkle counts
  ref, it = reference.solve_players_penalty(3, 300, -150, tol=1e-12,
                                            start=w.reshape(shape))
  assert it == 1
  np.testing.assert_allclose(w.reshape(shape), ref, rtol=0, atol=1e-12)
  assert changes[-1] < 1e-14 and len(changes) > 2


@pytest.mark.thorough
def test_a_penalty_reaches_the_reference_from_scratch():
  rules = dataclasses.replace(rules_lib.facebook(goal=300, floor=-150),
                              players=3)
  w, _ = _solved(rules, sweeps=20)
  ref, _ = reference.solve_players_penalty(3, 300, -150, tol=1e-14)
  np.testing.assert_allclose(w.reshape(ref.shape), ref, rtol=0, atol=1e-12)


def test_dice_that_differ_are_refused_in_one_line():
  rules = dataclasses.replace(
      rules_lib.minimal(goal=600), players=3,
      dice=((0.25, 0.1, 0.15, 0.15, 0.2, 0.15),))
  seats = SeatsLayout(rules)
  assert "dice that differ" in seat_wavefront.unsupported(seats)
  with pytest.raises(ValueError, match="does not run dice that differ"):
    seat_wavefront.build(seats, None, relative=False)


def _config(goal, players=3, **solver):
  config = configuration.base("minimal")
  config.rules.update(goal=goal, players=players)
  config.solver.update(tol=1e-14, norm="absolute", **solver)
  return config


def test_the_main_job_runs_it_and_resumes(tmp_path):
  """`solver.method = "wavefront"` with three players: the stage engine's
  start vectors to 1e-13, in its sweeps; a run stopped after its first
  sweep resumes from that checkpoint to the same values."""
  wave = driver.run(_config(300, method="wavefront"), str(tmp_path / "w"))
  stage = driver.run(_config(300, method="seats"), str(tmp_path / "s"))
  assert wave["method"] == "wavefront" and stage["method"] == "seats"
  assert wave["converged"] and wave["iterations"] == stage["iterations"]
  values = lambda d: np.load(tmp_path / d / "start_values.npy")
  np.testing.assert_allclose(values("w"), values("s"), rtol=0, atol=1e-13)
  assert wave["dependent_steps_per_sweep"] < wave["keys"]
  with pytest.raises(driver.NotConverged):
    driver.run(_config(300, method="wavefront", max_iterations=1),
               str(tmp_path / "r"))
  again = driver.run(_config(300, method="wavefront"), str(tmp_path / "r"))
  assert again["converged"] and again["iterations"] == 2
  np.testing.assert_array_equal(values("r"), values("w"))


def test_the_kernel_runs_where_asked_and_solves_as_xlas_step(tmp_path):
  """`solver.kernel`: 'pallas' runs the fused kernel (interpreted on a
  CPU), 'auto' XLA's step on a CPU and for a game this small on a GPU; a
  run with the kernel converges in the same sweeps to XLA's values."""
  def plan_of(kernel):
    rules, settings = configuration.check(_config(300, method="wavefront",
                                                  kernel=kernel))
    return seat_wave_engine.build(SeatsLayout(rules), settings)[1]
  cpu = jax.default_backend() == "cpu"
  assert plan_of("pallas").kernel == ("interpret" if cpu else "pallas")
  assert plan_of("auto").kernel == "xla" == plan_of("xla").kernel
  fused = driver.run(_config(300, method="wavefront", kernel="pallas"),
                     str(tmp_path / "k"))
  plain = driver.run(_config(300, method="wavefront", kernel="xla"),
                     str(tmp_path / "x"))
  assert fused["converged"] and fused["iterations"] == plain["iterations"]
  values = lambda d: np.load(tmp_path / d / "start_values.npy")
  # A GPU's dot adds XLA's terms in another order (as two players).
  np.testing.assert_allclose(values("k"), values("x"), rtol=0,
                             atol=1e-15 if cpu else 4e-15)


def test_the_kernels_bytes_are_counted_from_their_plan():
  """The fused kernel computes the tiles with a live column: at least the
  model's rows, at most every column-step; each it skips spares its reads
  of the row's targets and its six rows of C channels. XLA's step, and
  the kernel interpreted, move no bytes beyond XLA's count."""
  rules = dataclasses.replace(rules_lib.facebook(goal=300, floor=-150),
                              players=3)
  seats = SeatsLayout(rules)
  tables, plan = seat_wavefront.build(
      seats, bellman.roll_arrays(roll_tables.build(rules)), relative=False)
  fused = plan._replace(kernel="pallas")   # compiled (counted, not run)
  busy = seat_wave_counts.busy_rows(tables, fused, 128)
  every = int(np.dot(np.diff(np.asarray(tables.bounds)), plan.widths))
  assert seats.num_states // 6 <= busy < every
  assert seat_wave_counts.kernel_bytes(tables, plan, np.float64, busy) == 0
  interpreted = plan._replace(kernel="interpret")   # XLA counts its ops
  assert seat_wave_counts.kernel_bytes(tables, interpreted, np.float64) == 0
  skipped = (seat_wave_counts.kernel_bytes(tables, fused, np.float64)
             - seat_wave_counts.kernel_bytes(tables, fused, np.float64, busy))
  assert skipped == (every - busy) * (plan.row.num_targets + 8) * 3 * 8
  assert seat_wave_counts.xla_bytes(tables, plan, np.float64) > 0


@pytest.mark.parametrize("rules", [
    ["configs/tiny.py:minimal"],
    pytest.param(["configs/tiny.py:facebook", "--config.rules.floor=-150"],
                 marks=pytest.mark.thorough)], ids=["minimal", "penalty"])
def test_four_devices_give_the_values_of_one_bit_for_bit(tmp_path, rules):
  """The columns split over four (host) devices, as two players': the
  one-device values bit for bit (each score set's weighed sum in tiles of
  one size)."""
  args = ["--config", *rules, "--config.rules.players=3",
          "--config.rules.goal=300", "--config.solver.method=wavefront",
          "--config.solver.tol=1e-14", "--config.solver.norm=absolute"]
  runs = {}
  for devices in (1, 4):
    workdir = tmp_path / str(devices)
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=(
        f"--xla_force_host_platform_device_count={devices}"))
    out = subprocess.run([sys.executable, "-m", "farkle_jax.main", *args,
                          "--workdir", str(workdir)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (f"the wavefront on {devices} device(s)"
            in (workdir / "log.txt").read_text())
    runs[devices] = np.load(workdir / "start_values.npy")
  np.testing.assert_array_equal(runs[4], runs[1])


@pytest.mark.parametrize("players", [2, 3])
def test_the_kernel_asked_for_on_several_devices_is_one_line(tmp_path,
                                                            players):
  """`solver.kernel='pallas'` runs on one device, for two players as for
  three: over two, the run stops in one line naming what runs, before any
  sweep or result."""
  env = dict(os.environ, JAX_PLATFORMS="cpu",
             XLA_FLAGS="--xla_force_host_platform_device_count=2")
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax.main", "--config",
       "configs/tiny.py:minimal", f"--config.rules.players={players}",
       "--config.solver.method=wavefront", "--config.solver.kernel=pallas",
       "--workdir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
      text=True, timeout=300)
  assert out.returncode == 2
  assert out.stderr.strip() == ("error: config.solver.kernel='pallas' runs "
                                "on one device (2 here): use 'auto' or "
                                "'xla'")
  assert not (tmp_path / "summary.json").exists()


def test_dice_that_differ_are_refused_before_any_work(tmp_path):
  config = _config(600, method="wavefront")
  config.rules.dice = ((0.25, 0.1, 0.15, 0.15, 0.2, 0.15),)
  with pytest.raises(configuration.ConfigError,
                     match="'wavefront' is not allowed: .*'seats' with dice "
                           "that differ"):
    driver.run(config, str(tmp_path))
  assert not list(tmp_path.iterdir())


def test_float32_is_refused_as_for_the_stage_engine(tmp_path):
  config = _config(300, method="wavefront", dtype="float32")
  config.solver.tol = 1e-6
  with pytest.raises(configuration.ConfigError,
                     match="'float64' with more than two players"):
    driver.run(config, str(tmp_path))
  assert not list(tmp_path.iterdir())


def test_sweeps_that_stop_shrinking_stop_the_run_in_one_line():
  """Changes that no longer fall (the sweeps alternate between two policy
  profiles) end the run, naming the stage engine, which settles such a
  cycle at a midpoint; a change still falling does not."""
  engine = seat_wave_engine.SeatWaveEngine.__new__(
      seat_wave_engine.SeatWaveEngine)
  engine.settings = configuration.check(_config(300))[1]
  falling = [0.6, 0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
  engine._check_settling(falling)
  with pytest.raises(seat_wave_engine.Alternating,
                     match=r"alternate .*solver\.method='seats'"):
    engine._check_settling([0.6, 0.1, 1e-2, 7e-4, 3e-4, 7e-4, 3e-4, 7e-4])


def test_host_devices_each_count_against_the_one_memory(monkeypatch):
  """On a CPU the devices share the host's memory: the wavefront that fits
  it on one device is refused on two host devices whose shares (the rings
  split, the vectors and tables on each) add up to more."""
  config = configuration.base("facebook")
  config.rules.update(goal=1000, floor=-500, players=3)
  config.solver.method = "wavefront"
  seats = SeatsLayout(configuration.check(config)[0])
  one = seat_wave_engine.need_bytes(seats, 1)
  two = 2 * seat_wave_engine.need_bytes(seats, 2)
  assert two > one
  config.memory_limit_gb = (one + two) / 2 / 0.8 / 2**30
  rules, settings = configuration.check(config)
  seat_wave_engine.SeatWaveEngine(rules, settings)   # fits: no raise
  monkeypatch.setattr(jax, "device_count", lambda: 2)
  with pytest.raises(MemoryRefused, match="memory_limit_gb"):
    seat_wave_engine.SeatWaveEngine(rules, settings)


@pytest.mark.parametrize("limit, offers", [(2.0, True), (0.5, False)])
def test_a_wavefront_too_large_is_refused_naming_what_fits(tmp_path, limit,
                                                           offers):
  """The tiny three-player Facebook game's rings need 6 GB; with 2 GB the
  stage engine (0.7 GB) is named, with 0.5 GB nothing is: a refusal names
  only settings that fit, before any work."""
  config = configuration.base("facebook")
  config.rules.update(goal=1000, floor=-500, players=3)
  config.solver.method = "wavefront"
  config.memory_limit_gb = limit
  with pytest.raises(MemoryRefused) as refused:
    driver.run(config, str(tmp_path))
  assert ("solver.method='seats'" in str(refused.value)) == offers
  assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("rules, split", [
    (dataclasses.replace(rules_lib.minimal(goal=300), players=3), True),
    (dataclasses.replace(rules_lib.minimal(goal=300), players=3), False),
    pytest.param(dataclasses.replace(
        rules_lib.facebook(goal=300, floor=-150), players=3), True,
        marks=pytest.mark.thorough),
    pytest.param(dataclasses.replace(
        rules_lib.facebook(goal=400, floor=-100), players=3,
        entry_minimum=350), True, marks=pytest.mark.thorough),
    (dataclasses.replace(rules_lib.minimal(goal=250), players=4,
                         final_round=True, final_round_cap=100), True),
], ids=["minimal", "minimal-per-tile", "penalty", "penalty-entry",
        "final-round-4"])
def test_the_fused_kernel_sweeps_as_xlas_step(rules, split, monkeypatch):
  """The chunk's row as one kernel (Pallas' interpreter here) against
  XLA's step: every sweep of a solve, from the same start vectors, to
  rounding (its sums compensated, XLA's product in its own order). Row
  K, the sink, holds what idle columns leave, which no key reads. Split:
  a program per tile and dice count (the default), or per tile."""
  monkeypatch.setattr(wave_kernel, "TUNING",
                      wave_kernel.Tuning(split=split))
  seats = SeatsLayout(rules)
  tables, plan = seat_wavefront.build(
      seats, bellman.roll_arrays(roll_tables.build(rules)), relative=False)
  fused = plan._replace(kernel="interpret")
  w0 = multiplayer.initial_values(seats)
  for first in (True, False):
    want, change = sweep(w0, tables, plan=plan, fresh=first)
    got, _ = sweep(w0, tables, plan=fused, fresh=first)
    np.testing.assert_allclose(np.asarray(got)[:-1], np.asarray(want)[:-1],
                               rtol=0, atol=2e-15)
    w0 = want
  assert 0 < float(change) < 0.1
