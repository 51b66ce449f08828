"""JAX's persistent compilation cache: on by default, where the config
says, off on request, and a cache that cannot be written costs only the
cache."""

import os
import subprocess
import sys

import jax
import pytest

from farkle_jax.solver import compile_cache, configuration
from configs import tiny

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_setting_names_the_directory(monkeypatch, tmp_path):
  assert compile_cache.resolve("off") is None
  assert compile_cache.resolve(str(tmp_path)) == str(tmp_path)
  monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/somewhere")
  assert compile_cache.resolve("") == "/somewhere"   # the user's own
  monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR")
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
  before = jax.config.jax_compilation_cache_dir
  jax.config.update("jax_compilation_cache_dir", None)
  try:
    assert compile_cache.resolve("") == str(tmp_path / "farkle_jax" / "xla")
  finally:
    jax.config.update("jax_compilation_cache_dir", before)


def test_a_directory_that_cannot_be_written_turns_the_cache_off(tmp_path):
  before = jax.config.jax_compilation_cache_dir
  blocker = tmp_path / "a_file"
  blocker.write_text("")
  try:
    assert compile_cache.use(str(blocker / "cache")) is None
    assert not jax.config.jax_enable_compilation_cache
  finally:
    compile_cache.use(before or "off")


def test_a_bad_setting_fails_before_any_compute():
  config = tiny.get_config("minimal")
  config.compile_cache = None
  with pytest.raises(configuration.ConfigError, match="compile_cache"):
    configuration.check(config)


def _solve(workdir, cache, **more):
  env = {k: v for k, v in os.environ.items()
         if not k.startswith("JAX_PERSISTENT_CACHE")
         and k != "JAX_COMPILATION_CACHE_DIR"}
  env.update(more)
  return subprocess.run(
      [sys.executable, "-m", "farkle_jax.main", "--config",
       "configs/tiny.py:minimal", f"--workdir={workdir}",
       f"--config.compile_cache={cache}"],
      cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _entries(folder):
  return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_a_second_process_reads_the_chunk_from_the_cache(tmp_path):
  cache = str(tmp_path / "cache")
  first = _solve(tmp_path / "a", cache)
  assert first.returncode == 0, first.stderr[-2000:]
  written = _entries(cache)
  assert written   # the chunk and the other programs over 0.2 s
  second = _solve(tmp_path / "b", cache, JAX_LOG_COMPILES="1")
  assert second.returncode == 0, second.stderr[-2000:]
  assert "Persistent compilation cache hit for 'jit_chunk'" in second.stderr
  assert "compile cache off" not in second.stderr


def test_a_cache_that_cannot_be_written_costs_only_the_cache(tmp_path):
  blocker = tmp_path / "a_file"
  blocker.write_text("")
  out = _solve(tmp_path / "w", str(blocker / "cache"))
  assert out.returncode == 0, out.stderr[-2000:]
  assert "first-player win probability" in out.stdout
  warnings = [line for line in out.stderr.splitlines()
              if line.startswith("warning: ") and "compile cache off" in line]
  assert len(warnings) == 1 and "config.compile_cache" in warnings[0]
  assert "Traceback" not in out.stderr
