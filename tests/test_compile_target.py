"""Compiling for a GPU without one: the target's checks, the kernel count,
and the benchmark's H100 figures where JAX's CUDA plugin is installed."""

import ast
import json
import os
import subprocess
import sys

import pytest

from farkle_jax.solver import compile_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A Python with JAX's CUDA plugin (`experiments/deviceless_setup.sh`, run
# by .ci/run); the plugin is not a dependency of the package.
CUDA_PYTHON = os.environ.get("FARKLE_JAX_CUDA_PYTHON")


def test_unknown_targets_are_refused_naming_the_known_ones():
  with pytest.raises(compile_target.TargetError, match="known: h100"):
    compile_target.check("a100")


def test_a_missing_plugin_is_one_line_naming_the_install(monkeypatch):
  monkeypatch.setattr(compile_target, "PLUGIN", "jax_plugins.not_there")
  with pytest.raises(compile_target.TargetError) as e:
    compile_target.check("h100")
  assert "CUDA plugin is not installed" in str(e.value)
  assert "pip install" in str(e.value) and "\n" not in str(e.value)


def test_the_target_description_names_an_h100_and_its_sources():
  text = compile_target.description("h100")
  assert "core_count: 132" in text and "major: 9" in text
  assert "memory_bandwidth: 3352320000000" in text
  assert "Sources:" in text


def test_kernels_are_counted_outside_fused_bodies():
  hlo = """HloModule m

%fused_add (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %inner = f32[4]{0} fusion(%p), kind=kLoop, calls=%x
}

%body (c: f32[4]) -> f32[4] {
  %c = f32[4]{0} parameter(0)
  %loop_add_fusion = f32[4]{0} fusion(%c), kind=kLoop, calls=%fused_add
  %triton = f32[4]{0} custom-call(%c), custom_call_target="__gpu$xla.gpu.triton"
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %input_fusion = f32[4]{0} fusion(%a), kind=kInput, calls=%fused_add
}
"""
  assert compile_target.fusions(hlo) == 3


def _benchmark(python, *flags, env=None):
  return subprocess.run(
      [python, "experiments/benchmark.py", "--config",
       "configs/tiny.py:minimal", "--counts_only", "--sweeps=3", *flags],
      cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True,
      text=True, timeout=600)


def test_the_benchmark_refuses_a_bad_target_before_any_work():
  out = _benchmark(sys.executable, "--target=a100")
  assert out.returncode != 0
  assert "'a100' is not a known target" in out.stderr
  assert "Traceback" not in out.stderr and "model states" not in out.stdout


@pytest.mark.skipif(not CUDA_PYTHON, reason="no Python with JAX's CUDA "
                    "plugin: run `bash experiments/deviceless_setup.sh` and "
                    "set FARKLE_JAX_CUDA_PYTHON to the path it prints")
def test_the_benchmark_compiles_each_method_for_an_h100(tmp_path):
  out_json = tmp_path / "h100.json"
  out = _benchmark(CUDA_PYTHON,
                   "--methods=wavefront,value_iteration,seats-plain",
                   "--target=h100", f"--json={out_json}",
                   env={"JAX_PLATFORMS": "cpu"})
  assert out.returncode == 0, out.stderr[-3000:]
  assert "compiled for h100 without the GPU" in out.stdout
  record = json.load(open(out_json))
  for row in record["methods"]:
    assert row["h100_compile_s"] > 0
    assert row["h100_fusions"] > 0
    # The default game's chunks are too narrow for the kernel (auto): no
    # Pallas kernel, no registers read.
    assert row["h100_kernel_registers"] == {}
    if row["method"] == "seats-plain":   # its sweep, no bytes counted
      assert "h100_bytes_accessed_per_sweep" not in row
      continue
    assert row["h100_dependent_steps_per_sweep"] > 0
    # XLA charges at least the bytes the plan counts.
    plan = row["gathered_bytes_per_sweep"] + row["written_bytes_per_sweep"]
    assert row["h100_bytes_accessed_per_sweep"] > 0.5 * plan


_SEAT_KERNEL = """
import re, sys
from farkle_jax.configs import tiny
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import compile_target, configuration, seat_wave_engine
config = tiny.get_config("minimal")
config.rules.update(players=3, goal=300)
config.solver.update(method="wavefront", kernel=sys.argv[1])
rules, settings = configuration.check(config)
with compile_target.aiming("h100"):
  text = seat_wave_engine.lower_for_target(SeatsLayout(rules),
                                           settings).compile().as_text()
print(sorted(set(re.findall(r"(seat_wave_chunk_row|wave_move_columns)",
                            text))))
"""


@pytest.mark.skipif(not CUDA_PYTHON, reason="no Python with JAX's CUDA "
                    "plugin: run `bash experiments/deviceless_setup.sh` and "
                    "set FARKLE_JAX_CUDA_PYTHON to the path it prints")
def test_the_n_player_wavefront_compiles_its_fused_kernel_for_an_h100():
  """Asked for, the chunk's row and the moves are Triton kernels of the
  program compiled for an H100; XLA's step otherwise (`auto`: a chunk of
  the tiny game is too narrow to fill the GPU)."""
  def kernels(kernel):
    out = subprocess.run(
        [CUDA_PYTHON, "-c", _SEAT_KERNEL, kernel], cwd=ROOT,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": ROOT},
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]
  assert kernels("pallas") == "['seat_wave_chunk_row', 'wave_move_columns']"
  assert kernels("auto") == "[]"


_REGISTERS = """
import sys
from farkle_jax.configs import tiny
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (compile_target, configuration,
                               seat_wave_engine, wave_kernel)
config = tiny.get_config("minimal")
config.rules.update(players=3, goal=300)
config.solver.update(method="wavefront", kernel="pallas")
rules, settings = configuration.check(config)
for split in (True, False):
  wave_kernel.TUNING = wave_kernel.Tuning(split=split)
  with compile_target.aiming("h100"):
    print(compile_target.kernel_registers(
        seat_wave_engine.lower_for_target(SeatsLayout(rules), settings)))
"""


@pytest.mark.skipif(not CUDA_PYTHON, reason="no Python with JAX's CUDA "
                    "plugin: run `bash experiments/deviceless_setup.sh` and "
                    "set FARKLE_JAX_CUDA_PYTHON to the path it prints")
def test_the_kernels_registers_are_read_from_the_compiled_program():
  """ptxas's registers a thread of each Pallas kernel compiled for an
  H100: a program per dice count holds C sums where one per tile holds
  6 x C, so it needs fewer (48 against 126 for three players, seen)."""
  out = subprocess.run(
      [CUDA_PYTHON, "-c", _REGISTERS], cwd=ROOT,
      env={**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": ROOT},
      capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stderr[-3000:]
  split, per_tile = map(ast.literal_eval, out.stdout.strip().splitlines())
  assert set(split) == set(per_tile) == {"seat_wave_chunk_row",
                                         "wave_move_columns"}
  assert 0 < split["seat_wave_chunk_row"] < per_tile[
      "seat_wave_chunk_row"] <= 255
  assert split["wave_move_columns"] == per_tile["wave_move_columns"] > 0
