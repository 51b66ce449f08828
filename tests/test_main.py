"""The command-line entry points end to end on a tiny config."""

import json
import os
import re
import subprocess
import sys
import time

import jax
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ)  # JAX_PLATFORMS: see conftest


def _run(*args):
  return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=ENV,
                        capture_output=True, text=True, timeout=300)


def test_main_and_table_end_to_end(tmp_path):
  w = str(tmp_path)
  began = time.time()
  out = _run("farkle_jax.main", "--config", "configs/tiny.py:minimal",
             f"--workdir={w}", "--config.solver.tol=1e-12")
  wall = time.time() - began
  assert out.returncode == 0, out.stderr[-2000:]
  assert "first-player win probability: 0." in out.stdout
  assert "turn table b=0 d=0 f=0 e=0" in out.stdout
  # Quiet: a plain progress line with the ETA, no log records (those go
  # to the workdir's log, and to the terminal with -v).
  assert "max change" in out.stderr and "eta" in out.stderr, out.stderr
  assert not re.search(r"^[IWE]\d{4} ", out.stderr, re.M), out.stderr
  with open(os.path.join(w, "log.txt")) as f:
    log = f.read()
  assert "it=" in log and "eta=" in log, log
  summary = json.load(open(os.path.join(w, "summary.json")))
  assert summary["converged"] and summary["final_residual"] < 1e-12
  assert summary["config"]["solver"]["tol"] == 1e-12
  for key in ("first_player_win", "iterations", "wall_seconds_this_process",
              "device", "config"):
    assert key in summary
  # Where the process's time went: its phases, one after another, within
  # the command's wall time (the start read from /proc, to a clock tick).
  phases = summary["seconds"]
  assert list(phases) == ["starting", "building_and_compiling",
                          "opening_checkpoints", "sweeping",
                          "closing_checkpoints"]
  assert all(v >= 0 for v in phases.values()) and phases["starting"] > 0
  assert sum(phases.values()) < wall + 0.02
  assert "seconds: starting " in log
  # Auto is the ordered method on a CPU, the wavefront on an accelerator
  # (the suite's backend: see conftest); its counts reach the summary.
  backend = jax.default_backend()
  method = "ordered" if backend == "cpu" else "wavefront"
  assert f"method {method} (auto on a {backend} backend)" in log
  assert summary["method"] == method
  assert summary["state_updates"] >= summary["iterations"] * summary[
      "model_states"]
  # The ordered method's many small dependent steps, the wavefront's few
  # large ones (78 a sweep here).
  steps = summary["dependent_steps_per_sweep"]
  assert steps > 100 if method == "ordered" else 0 < steps < 100
  assert os.path.exists(os.path.join(w, "tables", "turn_b0_d0_f0_e0.json"))

  table = _run("farkle_jax.apps.table", f"--workdir={w}", "--b=500", "--d=100",
               "--json")
  assert table.returncode == 0, table.stderr[-2000:]
  data = json.loads(table.stdout)
  assert (data["b"], data["d"]) == (500, 100)
  row = data["rows"][0]
  assert row["t"] == 0 and set(row["W"]) == {"6", "5", "4", "3", "2", "1"}
  assert row["unreachable"] == [5, 4, 3, 2, 1]
  text = _run("farkle_jax.apps.table", f"--workdir={w}", "--b=500", "--d=100")
  assert "turn table b=500 d=100" in text.stdout

  bad = _run("farkle_jax.apps.table", f"--workdir={w}", "--b=525")
  assert bad.returncode != 0 and "b=525" in bad.stderr


def test_misspelled_override_fails_loudly(tmp_path):
  out = _run("farkle_jax.main", "--config", "configs/tiny.py:minimal",
             f"--workdir={tmp_path}", "--config.solver.tolerance=1e-3")
  assert out.returncode != 0
  assert "tolerance" in out.stderr
  assert not os.path.exists(os.path.join(tmp_path, "summary.json"))


def test_bad_config_value_is_one_line_error(tmp_path):
  out = _run("farkle_jax.main", "--config", "configs/tiny.py:minimal",
             f"--workdir={tmp_path}/w", "--config.solver.norm=l2")
  assert out.returncode != 0
  assert ("error: config.solver.norm = 'l2' is not allowed: one of "
          "('relative', 'absolute')") in out.stderr
  assert "Traceback" not in out.stderr
  assert not os.path.exists(os.path.join(tmp_path, "w"))


@pytest.mark.parametrize("players", ["2", "3"])
def test_a_newton_setting_that_is_not_a_flag_is_one_line_error(tmp_path,
                                                                players):
  """solver.newton takes True, False or nothing (None: where it pays);
  anything else stops before any work, for two players and three."""
  out = _run("farkle_jax.main", "--config", "configs/tiny.py:facebook",
             f"--workdir={tmp_path}/w", f"--config.rules.players={players}",
             "--config.solver.newton=yes")
  assert out.returncode != 0 and "Traceback" not in out.stderr
  errors = [l for l in out.stderr.splitlines() if l.startswith("error:")]
  assert errors == ["error: --config.solver.newton=yes: ('Non-boolean "
                    "argument to boolean flag', 'yes')"], out.stderr
  assert not os.path.exists(os.path.join(tmp_path, "w"))
