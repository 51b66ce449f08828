"""The `farkle` command: its subcommands, their help, its errors."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import COMMANDS, ROOT

SUBCOMMANDS = {   # what each runs, read from the sources, not the product
    "solve": "farkle_jax/main.py",
    "advise": "farkle_jax/apps/advise.py",
    "table": "farkle_jax/apps/table.py",
    "analyze": "farkle_jax/apps/analyze.py",
    "play": "farkle_jax/apps/play.py",
    "serve": "farkle_jax/apps/serve.py",
}
# The shared flags a command takes by calling command_line's definers.
SHARED = {"define_key_flags": ("b", "d", "f", "e", "hands"),
          "define_scores_flags": ("scores", "counts")}


def _farkle(*args):
  return COMMANDS("farkle_jax", *args)


def _flags_in_source(path: str) -> set[str]:
  """The flag names a command's source defines or asks command_line for."""
  with open(os.path.join(ROOT, path)) as f:
    text = f.read()
  names = set(re.findall(r"DEFINE_\w+\(\s*\"(\w+)\"", text))
  names |= {"config"} if "DEFINE_config_file" in text else set()
  for definer, shared in SHARED.items():
    if f"command_line.{definer}()" in text:
      names |= set(shared)
  return names | {"verbose"}


def test_the_overview_lists_every_command_and_the_shipped_configs():
  out = _farkle("--help")
  assert out.returncode == 0, out.stderr
  for name in SUBCOMMANDS:
    assert re.search(rf"^  {name} +\S", out.stdout, re.M), name
  shipped = sorted(f[:-3] for f in os.listdir(
      os.path.join(ROOT, "farkle_jax", "configs")) if f.endswith(".py")
      and not f.startswith("_"))
  for name in shipped:
    assert re.search(rf"^  {name} +\S", out.stdout, re.M), name
  assert _farkle().stdout == out.stdout   # `farkle` alone: the same


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_each_commands_help_lists_every_flag_with_an_example(name):
  out = _farkle(name, "--help")
  assert out.returncode == 0, out.stderr
  assert out.stdout.startswith(f"usage: farkle {name}")
  listed = set(re.findall(r"^  --(?:\[no\])?(\w+) \(default", out.stdout,
                          re.M))
  assert listed == _flags_in_source(SUBCOMMANDS[name]), listed
  examples = [line.strip() for line in out.stdout.splitlines()
              if line.strip().startswith(f"farkle {name}")]
  assert examples, out.stdout
  for line in examples:   # whole commands, none merged into the next
    assert "\\" not in line and not re.search(r"\S {4,}--", line), line


def test_a_mistyped_command_is_one_line_with_the_closest():
  out = _farkle("slove", "--config", "default")
  assert out.returncode == 2
  assert out.stderr.strip().splitlines() == [
      "error: 'slove' is not a farkle command; did you mean solve? "
      "(commands: solve, advise, table, analyze, play, serve; farkle "
      "--help)"]


def test_missing_flags_are_named_with_an_example():
  out = _farkle("solve")
  assert out.returncode == 2
  line, = out.stderr.strip().splitlines()
  assert line.startswith("error: missing --config and --workdir (e.g. "
                         "farkle solve --config "), line


def test_a_config_by_name_solves_from_any_directory(tmp_path):
  """No repository needed: the shipped configs live in the package."""
  out = subprocess.run(
      [sys.executable, "-m", "farkle_jax", "solve", "--config",
       "tiny:minimal", "--workdir", "w", "--config.solver.tol=1e-10"],
      cwd=tmp_path, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  assert "first-player win probability: 0." in out.stdout
  assert (tmp_path / "w" / "summary.json").exists()


def test_an_unknown_config_lists_the_shipped_ones():
  out = _farkle("solve", "--config", "facebok", "--workdir", "/nonexistent")
  assert out.returncode == 2
  line, = out.stderr.strip().splitlines()
  assert "--config=facebok: no such file or shipped config; did you mean " \
         "facebook?" in line and "zilch" in line


def test_the_installed_command_is_the_same():
  farkle = shutil.which("farkle")
  if farkle is None:
    pytest.skip("no `farkle` on PATH: the package is not pip-installed here")
  out = subprocess.run([farkle, "--help"], capture_output=True, text=True,
                       timeout=60)
  assert out.returncode == 0 and out.stdout == _farkle("--help").stdout
