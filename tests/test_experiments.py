"""The experiments' computations on tiny games (not their full runs)."""

import json
import os
import re
import sys

import jax
import numpy as np
import pytest

from conftest import COMMANDS, ROOT
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, driver, queries, results
from configs import tiny

sys.path.insert(0, os.path.join(ROOT, "experiments"))

import goal_preference  # noqa: E402
import iterations  # noqa: E402
import score_floor  # noqa: E402
import where_to_roll  # noqa: E402


def _script(path: str, *args: str):
  """`python path args` from the repository root, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS(path, *args)


def test_corner_max():
  x = np.array([[1, 0, 0], [0, 5, 0], [0, 0, 2]])
  m = score_floor.corner_max(x)
  assert m[0, 0] == 5 and m[1, 1] == 5 and m[2, 2] == 2 and m[0, 2] == 2


def test_identical_region_and_decay_on_synthetic_data():
  scores = np.arange(0, 500, 50)
  dev = np.zeros((10, 10, 3, 3))
  diffs = np.zeros((10, 10, 3, 3), int)
  for i in range(10):
    dev[i, i] = 10.0 ** -i
  diffs[3, 4, 2, 0] = 1   # only with a farkle count of 2
  diffs[1, 1, 0, 0] = 1
  region = score_floor.identical_region(scores, dev, diffs)
  assert region[0] == (100, 0.01)
  assert region[2] == (200, 1e-4)
  curve = score_floor.deviation_by_b(scores, dev)
  assert curve[2] == (100, 0.01)
  assert score_floor.decay_per_500(curve) == pytest.approx(1e10)


@pytest.fixture(scope="module")
def two_floors(tmp_path_factory):
  runs = []
  for floor in (-500, -1000):
    cfg = tiny.get_config("facebook")
    cfg.rules.floor = floor
    path = str(tmp_path_factory.mktemp(f"L{-floor}"))
    driver.run(cfg, path)
    runs.append(results.load(path)[:3])
  return runs


def _keys_reading(layout, k):
  """[K] bool: the keys whose turn reads W0 of key k, by the definitions of
  the model: the opponent's key after a farkle, or after banking a total t
  that banking allows (t >= bank minimum) short of winning (t <= t_max(b))."""
  fields = layout.key_fields()
  target = layout.key_fields(k)
  reads = layout.farkle_index(fields) == k
  for t in range(layout.bank_min, layout.num_rows):
    after = layout.after_bank(fields, t)
    hit = t <= layout.t_max(fields[0])
    for a, want in zip(after, target):
      hit = hit & (a == want)
    reads |= hit
  return reads


def test_compare_run_with_itself(two_floors):
  scores, dev, diffs = score_floor.compare_runs(two_floors[0],
                                                two_floors[0])
  assert dev.max() == 0 and diffs.max() == 0
  region = score_floor.identical_region(scores, dev, diffs)
  assert region[2] == (-500, 0.0)


def test_compare_runs_sees_a_perturbed_key_exactly_where_it_is_read(
    two_floors):
  w0, layout, roll = two_floors[0]
  # A key both a farkle and a bank lead to: f = 1 needs the farkle of a key
  # with e = 1, e = 0 a bank or a last farkle (f = 2 -> 0).
  k = layout.key_index(layout.index_of(300), layout.index_of(200), 1, 0)
  reads = _keys_reading(layout, k)
  farkles = layout.farkle_index(layout.key_fields()) == k
  assert farkles.any() and (reads & ~farkles).any()
  perturbed = w0.copy()
  perturbed.reshape(-1)[k] = 0.0   # banking into k now wins outright
  scores, dev, diffs = score_floor.compare_runs((w0, layout, roll),
                                                (perturbed, layout, roll))
  # Both runs have every banked score: the compared keys are all keys.
  assert list(scores) == [layout.points(i) for i in range(layout.num_scores)]
  assert dev.shape == layout.key_shape
  changed = dev.reshape(-1) > 0
  np.testing.assert_array_equal(changed, reads)
  assert not diffs.reshape(-1)[~reads].any()
  assert diffs.reshape(-1)[reads].any()


def test_deviation_by_b_matches_direct_computation(two_floors):
  (wa, la, roll), (wb, lb, _) = two_floors
  scores, dev, _ = score_floor.compare_runs(two_floors[0], two_floors[1])
  curve = dict(score_floor.deviation_by_b(scores, dev))
  assert curve[-500] > curve[0] > curve[500] > 0
  B = 500
  keys_a, keys_b = [], []
  for b in range(B, 1000, 50):
    for d in range(B, 1000, 50):
      for f in range(3):
        for e in range(3):
          keys_a.append(la.key_index(la.index_of(b), la.index_of(d), f, e))
          keys_b.append(lb.key_index(lb.index_of(b), lb.index_of(d), f, e))
  ra = bellman.turn_values(wa, np.array(keys_a), la, roll)
  rb = bellman.turn_values(wb, np.array(keys_b), lb, roll)
  T = min(ra.shape[0], rb.shape[0]) - 1
  ra, rb = ra[:T], rb[:T]
  bs = np.array([la.index_of(b) for b in range(B, 1000, 50)
                 for _ in range(B, 1000, 50) for _ in range(9)])
  live = np.arange(T)[:, None] <= la.t_max(bs)[None]
  rel = 2 * np.abs(ra - rb) / (ra + rb)
  worst = np.where(live[:, None], rel, 0).max()
  assert curve[B] == pytest.approx(worst, rel=1e-12)


def test_discrepancies():
  states = [(50, 5, 0.50, 300.0), (100, 4, 0.49, 310.0),
            (150, 3, 0.52, 320.0), (200, 2, 0.52, 330.0)]
  pairs = goal_preference.discrepancies(states)
  assert pairs == [((50, 5, 0.50, 300.0), (100, 4, 0.49, 310.0))]


def test_opening_states_and_where_to_roll(tiny_runs):
  w0, layout, roll, _ = tiny_runs("minimal")
  states = goal_preference.opening_states(w0, layout, roll, 500)
  assert all(0 < t <= 500 for t, *_ in states)
  assert (50, 5) in [(t, n) for t, n, *_ in states]
  assert (50, 6) not in [(t, n) for t, n, *_ in states]
  first, again = where_to_roll.thresholds(w0, layout, roll)
  table = queries.turn_table(w0, layout, roll, 0, 0, 0, 0)
  for n in range(1, 7):
    banks = [r["t"] for r in table["rows"]
             if r["action"].get(str(n)) == "bank" and r["t"] >= 50]
    assert first[0, 0, n - 1] == (min(banks) if banks else -1)


def test_iterations_rows_from_a_traced_solve(tiny_runs):
  _, _, _, workdir = tiny_runs("minimal")
  summary = results.read_summary(workdir)
  rows = iterations.rows_of("ordered", summary)
  assert len(rows) == summary["iterations"]
  assert rows[-1]["first_player_win"] == pytest.approx(
      summary["first_player_win"], abs=1e-15)
  assert iterations.sweeps_to(rows, summary["tol"]) == summary["iterations"]


def test_where_to_roll_script_writes_its_outputs(tmp_path):
  out = _script("experiments/where_to_roll.py", "--config",
                "configs/tiny.py:minimal", "--workdir", str(tmp_path))
  assert out.returncode == 0, out.stderr[-2000:]
  for name in ("where_to_roll.csv", "where_to_roll.png", "where_to_roll.md"):
    assert os.path.getsize(tmp_path / name) > 0


@pytest.mark.thorough
def test_sweep_cost_script_times_both_variants_and_the_parts():
  out = _script("experiments/sweep_cost.py", "--config",
                "configs/tiny.py:facebook", "--config.rules.goal=600",
                "--sweeps=1", "--parts")
  assert out.returncode == 0, out.stderr[-2000:]
  lines = out.stdout.splitlines()
  assert "goal=600" in lines[0]
  names = ("ordered-plain", "ordered-newton", "without the forward pass",
           "without store, correction")
  assert len(lines) == 1 + len(names)
  for name, line in zip(names, lines[1:]):
    assert line.strip().startswith(name)
    assert float(line.split("s per sweep")[0].split()[-1]) > 0
    assert "1 sweeps" in line


def test_benchmark_script_builds_each_method_from_the_config(tmp_path):
  out = _script("experiments/benchmark.py", "--config",
                "configs/tiny.py:facebook", "--max_sweeps=100",
                "--methods=wavefront,wavefront-newton,ordered-plain,"
                "ordered-newton,seats,value_iteration",
                "--json", str(tmp_path / "b.json"),
                "--config.rules.goal=600", "--config.rules.floor=-250",
                "--config.solver.tol=1e-12",
                # ordered-plain's sub-batches as on a CPU, on any backend
                # (see test_driver: the steps compared below).
                "--config.solver.b_group=16")
  assert out.returncode == 0, out.stderr[-2000:]
  lines = out.stdout.splitlines()
  assert "configs/tiny.py:facebook" in lines[0]
  assert "goal=600" in lines[0] and "tol 1e-12" in lines[0]
  rows, counted = {}, {}
  for line in lines:   # the first table: the solve; the second: the bytes
    if line.split()[0] in ("ordered-newton", "ordered-plain", "seats",
                           "value_iteration", "wavefront",
                           "wavefront-newton"):
      (counted if line.split()[0] in rows else rows)[line.split()[0]] = \
          line.split()
  assert set(rows) == {"ordered-newton", "ordered-plain", "value_iteration",
                       "wavefront", "wavefront-newton", "seats"}
  for r in rows.values():
    assert 0 < int(r[1]) < 100         # converged before the sweep limit
    assert float(r[-1]) < 1e-10        # W0 agrees with the baseline
  record = json.loads((tmp_path / "b.json").read_text())
  # The script runs on the suite's backend (JAX_PLATFORMS: see conftest).
  assert (record["model_states"] > 0
          and record["backend"] == jax.default_backend())
  by = {m["method"]: m for m in record["methods"]}
  for name, r in by.items():
    assert r["sweeps"] == int(rows[name][1])
    assert r["state_updates"] >= r["sweeps"] * record["model_states"] * 0.99
    for key in ("wall_s", "compile_s", "peak_host_gb", "peak_device_gb"):
      assert r[key] >= 0
    assert r["max_abs_diff_from_baseline"] < 1e-10
    if name == "seats":   # the stage engine: counted from the sizes
      assert r["dependent_steps_per_sweep"] > 0 and r["updates_per_s"] > 0
      assert r["gathered_bytes_per_sweep"] > 0 and r["stage_passes_per_sweep"]
      assert r["xla_bytes_accessed_per_sweep"] == 0
      continue
    for key in ("gathered_bytes_per_sweep", "written_bytes_per_sweep",
                "xla_bytes_accessed_per_sweep", "projected_h100_seconds"):
      assert r[key] > 0
    assert r["rows_evaluated_per_sweep"] >= r["live_rows_per_sweep"]
  assert set(counted) == set(rows)
  # The wavefront reads each distinct target of a row once; the turn pass
  # reads every option.
  assert (by["wavefront"]["gathered_bytes_per_sweep"] * 4
          < by["ordered-plain"]["gathered_bytes_per_sweep"])
  # The Newton correction saves sweeps; the wavefront's few large steps
  # against the ordered method's many.
  assert by["ordered-newton"]["sweeps"] < by["ordered-plain"]["sweeps"]
  assert (by["wavefront"]["dependent_steps_per_sweep"] * 10
          < by["ordered-plain"]["dependent_steps_per_sweep"])
  assert "refreshes" not in by["wavefront"]
  _check_refreshes(by["wavefront-newton"], record["model_states"])


def _check_refreshes(step: dict, states: int) -> None:
  """The wavefront's Newton step: each refresh two evaluations of every
  state, and its bytes and steps in the projection."""
  assert step["refreshes"] >= 1
  assert step["state_updates"] == pytest.approx(
      (step["sweeps"] + 2 * step["refreshes"]) * states)
  per_sweep = (step["gathered_bytes_per_sweep"]
               + step["written_bytes_per_sweep"]) / 3.35e12 + step[
                   "dependent_steps_per_sweep"] * 8e-6
  assert step["projected_h100_seconds"] > (
      step["sweeps"] * per_sweep + step["refreshes"]
      * (step["refresh_gathered_bytes"] / 3.35e12
         + step["refresh_dependent_steps"] * 8e-6))
  assert step["correction_dependent_steps"] > 0


def test_benchmark_counts_without_solving(tmp_path):
  out = _script("experiments/benchmark.py", "--config",
                "configs/tiny.py:facebook", "--counts_only", "--sweeps=7",
                "--methods=wavefront,ordered-accelerator",
                "--json", str(tmp_path / "p.json"), "--config.rules.goal=600",
                "--config.rules.floor=-250")
  assert out.returncode == 0, out.stderr[-2000:]
  assert "no solve: 7 sweeps assumed" in out.stdout
  by = {m["method"]: m for m in json.loads((tmp_path / "p.json").read_text())
        ["methods"]}
  assert set(by) == {"wavefront", "ordered-accelerator"}
  for r in by.values():
    assert r["sweeps"] == 7 and r["compile_s"] > 0
    assert r["gathered_bytes_per_sweep"] > 0
    assert r["xla_bytes_accessed_per_sweep"] > 0
    # The projection is the formula of the docstring.
    moved = r["gathered_bytes_per_sweep"] + r["written_bytes_per_sweep"]
    assert r["projected_h100_seconds"] == pytest.approx(
        7 * (moved / 3.35e12 + r["dependent_steps_per_sweep"] * 8e-6))
  assert (by["wavefront"]["dependent_steps_per_sweep"] * 5
          < by["ordered-accelerator"]["dependent_steps_per_sweep"])


def test_strategy_report_script_writes_its_outputs(tmp_path):
  out = _script("experiments/strategy_report.py", "--config",
                "configs/tiny.py:minimal", "--workdir", str(tmp_path),
                "--games=2000", "--nosearch", "--bank_at=300")
  assert out.returncode == 0, out.stderr[-2000:]
  md = (tmp_path / "analysis" / "strategy_report.md").read_text()
  assert "## Memorized table" in md and "| bank:300 |" in md
  with open(tmp_path / "analysis" / "strategy_report.json") as f:
    rep = json.load(f)
  assert list(rep["exact"]) == ["optimal", "maxscore", "memorized",
                                "bank:300"]
  assert rep["exact"]["optimal"]["overall"] == pytest.approx(0.5, abs=1e-12)
  assert set(rep["simulation"]) == set(rep["exact"])
  assert rep["komi"]["fairest"] in [k for k, _ in rep["komi"]["curve"]]


def test_advice_latency_script_times_the_api_and_http(tmp_path, tiny_runs):
  workdir = tiny_runs("facebook")[3]
  out = _script("experiments/advice_latency.py", "--workdir", workdir,
                "--requests=20", "--warmup=5", "--json",
                str(tmp_path / "l.json"))
  assert out.returncode == 0, out.stderr[-2000:]
  got = json.load(open(tmp_path / "l.json"))
  for name in ("api", "http"):
    assert got[name]["requests"] == 20
    assert 0 < got[name]["p50_ms"] <= got[name]["p99_ms"] <= got[name]["max_ms"]


def test_advice_load_script_reports_p99_and_no_errors(tmp_path, tiny_runs):
  workdir = tiny_runs("facebook")[3]
  out = _script("experiments/advice_load.py", "--workdir", workdir,
                "--clients=3", "--requests=30", "--warmup=3",
                "--json", str(tmp_path / "l.json"))
  assert out.returncode == 0, out.stderr[-2000:]
  got = json.load(open(tmp_path / "l.json"))
  assert (got["players"], got["clients"], got["requests"]) == (2, 3, 30)
  assert got["errors"] == 0 and got["answered"] == 30
  assert 0 < got["p50_ms"] <= got["p99_ms"] <= got["max_ms"]
  assert got["requests_per_s"] > 0


def test_advice_load_positions_are_all_legal_for_three_players():
  """Every request the load tool makes for three players is one the game
  answers (a position play reaches, a roll of the dice to roll); the
  game's values are zeros here, as the checks do not read them."""
  import advice_load  # noqa: E402  (experiments/, on the path above)
  from farkle_jax.game import rules as rules_lib
  from farkle_jax.game.seats import SeatsLayout
  from farkle_jax.strategy import positions, seat_game
  seats = SeatsLayout(rules_lib.from_mapping(
      {"preset": "minimal", "goal": 500, "players": 3}))
  game = seat_game.SeatGame(np.zeros(seats.key_shape + (3,)), seats, {})
  for path in advice_load.queries(game, 60, seed=1):
    q = dict(x.split("=") for x in path.split("?")[1].split("&"))
    answer = game.advice(positions.parse_scores(q["scores"]), int(q["t"]),
                         int(q["n"]), positions.parse_dice(q["roll"]),
                         positions.parse_scores(q["counts"]))
    assert len(answer["dice"]) == int(q["n"])


@pytest.mark.thorough
def test_players_script_solves_a_run_it_does_not_find(tmp_path):
  """An empty --workdir: the run is solved (not refused), and its row holds
  the first player's win of the plain reference."""
  import reference
  out = _script("experiments/players.py", "--workdir",
                str(tmp_path / "runs"), "--out", str(tmp_path / "out"),
                "--runs=minimal_2p_2000")
  assert out.returncode == 0, out.stderr[-2000:]
  row = json.loads((tmp_path / "out" / "players.json").read_text())[
      "runs"]["minimal_2p_2000"]
  w0, _ = reference.solve("minimal", 2000, 0)
  assert abs(row["seat_win"][0] - w0[(0,) * w0.ndim]) < 1e-9
  assert abs(sum(row["seat_win"]) - 1) < 1e-12
  assert "| minimal_2p_2000 | 2 | 2000 |" in (tmp_path / "out" /
                                               "players.md").read_text()


def test_pass_cost_script_times_each_player_count():
  """The N-player pass on random batches of its own shapes: a change of the
  pass's channels must reach this script too."""
  out = _script("experiments/pass_cost.py", "--keys", "64", "--rows", "8",
                "--repeats", "1")
  assert out.returncode == 0, out.stderr[-2000:]
  lines = out.stdout.splitlines()
  assert lines[1].startswith("two players (scalar)")
  assert [line.split()[0] for line in lines[2:]] == ["2", "3", "4"]


def test_dice_worth_script_refuses_bad_flags_in_one_line(tmp_path):
  for flag, says in ((["--die", "luky"], "--die: 'luky' is not in the catalog"),
                     (["--counts", "7"], "--counts: numbers of dice from 0 "
                                         "to 6, got 7"),
                     (["--config", "configs/facebook.py"],
                      "--config: two players, no farkle penalty")):
    out = _script("experiments/dice_worth.py", "--workdir",
                  str(tmp_path), *flag)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert says in out.stderr
  assert not any(tmp_path.iterdir())      # refused before any solve


def test_dice_catalog_script_refuses_a_sheet_without_a_meaning_for_jokers(
    tmp_path):
  out = _script("experiments/dice_catalog.py", "--config",
                "configs/zilch.py", "--out", str(tmp_path))
  assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
  assert "without rules.nothing_roll" in out.stderr
  assert not any(tmp_path.iterdir())


# Thorough: an experiment script end to end (two compiles, a sweep each).
@pytest.mark.thorough
def test_kernel_tuning_times_each_variant_and_agrees(tmp_path):
  out = _script("experiments/kernel_tuning.py", "--config",
                "configs/tiny.py:facebook", "--config.rules.goal=600",
                "--config.rules.floor=-250", "--variants=xla:4,xla:1",
                "--sweeps=1", "--json", str(tmp_path / "k.json"))
  assert out.returncode == 0, out.stderr[-2000:]
  record = json.loads((tmp_path / "k.json").read_text())
  rows = {r["variant"]: r for r in record["variants"]}
  assert set(rows) == {"xla:4", "xla:1"}
  for r in rows.values():
    assert r["sweeps"] == 1 and r["sweep_s"] > 0
    assert r["dependent_steps_per_sweep"] > 0
    assert r["max_abs_diff"] < 1e-14   # the same sweeps, cut otherwise
  bad = _script("experiments/kernel_tuning.py", "--variants=cuda:4")
  assert bad.returncode != 0 and "kernel:chunks" in bad.stderr


@pytest.mark.parametrize("methods", ["seats,ordered", "seats-plain"])
def test_benchmark_refuses_the_stage_engine_where_it_cannot_run(methods):
  out = _script("experiments/benchmark.py", "--config",
                "configs/tiny.py:facebook", f"--methods={methods}")
  assert out.returncode == 2 and "Traceback" not in out.stderr
  assert out.stderr.strip() == ("error: --methods: 'seats' needs a "
                                "two-player method before it (the "
                                "baseline of its solve)")


def test_benchmark_counts_the_stage_engine_for_three_players(tmp_path):
  """`--counts_only` counts the seat engine's sweep from the sizes for any
  number of players; its gathers read the mover's channel of every
  option, then each option's mass and pick (the exits' forward pass), and
  for the picks and the mix every option and one bank vector a row of
  the turn."""
  out = _script("experiments/benchmark.py", "--config",
                "configs/tiny.py:facebook", "--counts_only", "--sweeps=7",
                "--methods=seats-plain,seats-wavefront", "--json",
                str(tmp_path / "s.json"), "--config.rules.players=3",
                "--config.rules.goal=400", "--config.rules.floor=-200")
  assert out.returncode == 0, out.stderr[-2000:]
  record = json.loads((tmp_path / "s.json").read_text())
  r, wave = record["methods"]
  assert r["method"] == "seats-plain" and r["sweeps"] == 7
  # The N-player wavefront's schedule: the same live rows, far fewer steps
  # (the stage engine's depend on the backend's group size: 1,064 on a
  # GPU against the wavefront's 151).
  assert wave["method"] == "seats-wavefront"
  assert wave["live_rows_per_sweep"] == r["live_rows_per_sweep"]
  assert 5 * wave["dependent_steps_per_sweep"] < r[
      "dependent_steps_per_sweep"]
  assert r["xla_bytes_accessed_per_sweep"] == 0
  assert r["projected_h100_seconds_from_xla"] is None
  # The wavefront's sweep as compiled here, each loop body at its trips.
  moved = wave["gathered_bytes_per_sweep"] + wave["written_bytes_per_sweep"]
  assert wave["xla_bytes_accessed_per_sweep"] > moved
  assert wave["projected_h100_seconds_from_xla"] > 0
  rules = rules_lib.facebook(goal=400, floor=-200).replace(players=3)
  seats = SeatsLayout(rules)
  options = sum(int(np.prod(g.rows.shape)) for g in bellman.roll_arrays(
      roll_tables.build(rules)).groups)
  # The model's states are the N-player layout's, as the header says.
  assert record["model_states"] == seats.num_states
  assert f"# model states {seats.num_states:,} (3 players)" in out.stdout
  rows = r["rows_evaluated_per_sweep"]
  whole = r["gathered_bytes_per_sweep"] - (
      rows * (options * (8 + 9) + 3 * 8) + seats.num_keys * 3 * 8)
  # The picks and the mix: every row of the turn (T + 1) of every key slot
  # of a sub-batch that passes a row at all.
  per = (seats.num_rows + 1) * (options + 3) * 8
  assert whole % per == 0 and seats.num_keys <= whole // per <= rows
  assert rows >= r["live_rows_per_sweep"] == seats.num_states // 6
  moved = r["gathered_bytes_per_sweep"] + r["written_bytes_per_sweep"]
  assert r["projected_h100_seconds"] == pytest.approx(
      7 * (moved / 3.35e12 + r["dependent_steps_per_sweep"] * 8e-6))


def test_seats_plan_script_counts_memory_and_writes_its_plan(tmp_path):
  out = _script("experiments/seats_plan.py", "--config",
                "configs/tiny.py:facebook", "--config.rules.players=3",
                "--devices=1,2", "--groups=64", f"--out={tmp_path}")
  assert out.returncode == 0, out.stderr[-2000:]
  plan = json.loads((tmp_path / "plan.json").read_text())
  one, two = plan["rows"]
  assert (one["devices"], two["devices"]) == (1, 2)
  assert two["device_gb"] < one["device_gb"] and one["fits_h100"]
  assert one["exchanged_gb"] == 0 < two["exchanged_gb"]
  assert one["newton_gb"] > 0 and one["newton_fits"]
  # The N-player wavefront's schedule beside it: far fewer steps.
  wave_one, wave_two = plan["wavefront"]
  assert wave_one["dependent_steps"] * 30 < one["dependent_steps"]
  assert wave_two["device_gb"] < wave_one["device_gb"]
  assert wave_one["fits_h100"] and wave_one["h100s_needed"] == 1
  text = (tmp_path / "plan.md").read_text()
  assert "a projection, not a measurement" in text
  assert "1 x 64: " in text and "GB more, fits" in text
  assert "The wavefront for N players" in text
  assert ("--config configs/tiny.py:facebook --config.rules.players=3 "
          "--config.solver.chunk_keys=64 --workdir /shared/runs/seats "
          "--coordinator node0:12355 --num_processes 2") in text
  bad = _script("experiments/seats_plan.py", "--devices=0",
                f"--out={tmp_path}")
  assert bad.returncode != 0 and "Traceback" not in bad.stderr
  assert "error: --devices=0: expected positive integers" in bad.stderr


def test_notebook_run_refuses_a_missing_config_in_one_line(tmp_path):
  out = _script("experiments/notebook_run.py", "--config",
                "configs/nope.py", "--workdir", str(tmp_path))
  assert out.returncode == 2 and "Traceback" not in out.stderr
  assert out.stderr.strip().splitlines() == [
      f"notebook_run: --config 'configs/nope.py': no file configs/nope.py "
      f"in {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}"]


def test_collectives_lists_what_a_split_sweep_exchanges():
  """The wavefront over two host devices: its compiled sweep's collective
  operations, those of its loop steps apart, and the estimate they bound.
  Its rings in column blocks (`wave_columns`), no step gathers them whole
  (before, every step did: 207 MB a step on `default`); the moves and the
  finishing groups still exchange columns."""
  out = _script("experiments/collectives.py", "--config",
                "configs/tiny.py:minimal", "--devices=2")
  assert out.returncode == 0, out.stderr[-2000:]
  lines = out.stdout.strip().splitlines()
  assert re.match(r"# the wavefront's sweep over 2 host devices: \d+ "
                  r"dependent steps a sweep", lines[0])
  steps = [line for line in lines if line.startswith("a loop step")]
  assert steps and not any("f64[2," in line for line in steps), steps
  m = re.match(r"# estimate, not a measurement: at most ([\d.]+) MB a "
               r"step, ([\d.]+) GB a sweep between devices \(an upper "
               r"bound\)", lines[-1])
  assert m and float(m.group(1)) > 0
  for args in (("--config=configs/nope.py",), ("--devices=0",),
               ("--devices", "two")):
    bad = _script("experiments/collectives.py", *args)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
  # The layout that would end them: a chunk's step on a ring laid out
  # [devices, columns per device] compiles to no exchange at all.
  layouts = _script("experiments/collectives.py", "--layouts",
                    "--devices=2")
  assert layouts.returncode == 0, layouts.stderr[-2000:]
  split, blocked = layouts.stdout.strip().splitlines()
  assert split.startswith("columns split") and "all-gather f64[2," in split
  assert blocked.startswith("[devices, columns per device]")
  assert blocked.endswith(": 0 collectives")


def test_start_accuracy_refuses_bad_flags_in_one_line():
  for flag, says in ((["--errors", "x"], "--errors: ['x'] are not numbers"),
                     (["--errors", "2"], "each must lie in (0, 1)"),
                     (["--method", "value_iteration"],
                      "does not start from its start values alone"),
                     (["--config.rules.players", "3"],
                      "rules.players: 3: this experiment restarts")):
    out = _script("experiments/start_accuracy.py", "--config",
                  "configs/tiny.py:facebook", *flag)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert says in out.stderr


@pytest.mark.thorough
def test_start_accuracy_restarts_near_the_solution(tmp_path):
  """Each restart begins within its error of the solution (its first
  change is about that error, not the initial values' 0.5) and ends at the
  tolerance, as the solve from the initial values does."""
  out = _script("experiments/start_accuracy.py", "--config",
                "configs/tiny.py:facebook", "--method=wavefront",
                "--errors=1e-3,1e-6", "--json", str(tmp_path / "s.json"))
  assert out.returncode == 0, out.stderr[-2000:]
  table = json.loads((tmp_path / "s.json").read_text())
  first, *restarts = table["rows"]
  assert first["changes"][0] > 0.1 and first["changes"][-1] < table["tol"]
  assert [(r["error"], r["kind"]) for r in restarts] == [
      (1e-3, "noise"), (1e-3, "scale"), (1e-6, "noise"), (1e-6, "scale")]
  for r in restarts:
    assert r["changes"][0] <= 2 * r["error"], r
    assert r["changes"][-1] < table["tol"] and r["sweeps"] < first["sweeps"]
  assert len(out.stdout.splitlines()) == 1 + len(restarts)
