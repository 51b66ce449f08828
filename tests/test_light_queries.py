"""A query of a solved two-player game is NumPy alone: no JAX imported, the
roll tables read from their cache, the reachable states in a few
vectorized steps; and the package still turns JAX's 64-bit mode on."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from farkle_jax.game import roll_cache, roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.strategy.solved_game import SolvedGame

HEAVY = ("jax", "jaxlib", "orbax", "ml_collections")


def _python(code: str) -> subprocess.CompletedProcess:
  """`python -c code` in a fresh process, without the environment's
  JAX_ENABLE_X64 (the test process's package set it)."""
  env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
  return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                        capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [
    "--b 0 --d 0 --roll 6,5,3,3,3,2",
    "--b 500 --d 1200 --t 350 --n 2",
    "--shipped default --t 650 --n 3 --roll 1,1,5 --json",
    "--shipped default --b 500 --d -500 --f 2 --t 300 --roll 2,3",
])
def test_advise_on_two_players_imports_no_jax(args):
  out = _python(
      "import runpy, sys\n"
      f"sys.argv = ['advise', *{args.split()!r}]\n"
      "try:\n"
      "  runpy.run_module('farkle_jax.apps.advise', run_name='__main__',\n"
      "                   alter_sys=True)\n"
      "except SystemExit as e:\n"
      "  assert not e.code, e.code\n"
      f"print('loaded:', [m for m in {HEAVY!r} if m in sys.modules])\n")
  assert out.returncode == 0, out.stderr
  assert out.stdout.splitlines()[-1] == "loaded: []", out.stdout
  assert re.search(r"0\.\d{6}", out.stdout), out.stdout


def test_the_library_query_and_turn_table_import_no_jax():
  out = _python(
      "import sys, farkle_jax\n"
      "game = farkle_jax.load(shipped='default')\n"
      "game.win_probability(farkle_jax.Position(0, 0))\n"
      "farkle_jax.advise(game, (0, 0), roll=(1, 5, 2, 2, 3, 4))\n"
      "game.table((0, 500))\n"
      f"print([m for m in {HEAVY!r} if m in sys.modules])\n")
  assert out.returncode == 0 and out.stdout.strip() == "[]", out


@pytest.mark.parametrize("first", [
    "import farkle_jax\nfrom farkle_jax.solver import bellman\nimport jax",
    "import jax\nimport farkle_jax",
])
def test_jax_is_64_bit_however_it_is_imported(first):
  out = _python(f"{first}\nimport jax.numpy as jnp\n"
                "print(jax.config.jax_enable_x64, jnp.zeros(1).dtype)")
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["True", "float64"]


def _loop_reachable(roll, size, start):
  """`roll_tables.reachable` as a plain loop over every state."""
  reach = np.zeros((size, roll.dice_states), bool)
  reach[0, start - 1] = True
  for t in range(size):
    for n in range(1, roll.dice_states + 1):
      if reach[t, n - 1]:
        for pts, nxt in roll.reach_pts[n - 1]:
          if t + pts < size:
            reach[t + pts, nxt - 1] = True
  return reach


def _hands_rules():
  """Two hands of dice that differ (dice states of both, one by one)."""
  odd, mute = (0.4, 0.2, 0, 0, 0.2, 0.2), (0, 0.25, 0.25, 0.25, 0.25, 0)
  return rules_lib.from_mapping({"preset": "minimal", "goal": 2000, "hands": (
      (odd, mute, mute), (odd, odd, mute))})


@pytest.fixture(scope="module", params=["facebook", "minimal", "hands"])
def rules(request):
  if request.param == "hands":
    return _hands_rules()
  return getattr(rules_lib, request.param)()


def test_reachable_states_are_those_of_the_plain_loop(rules):
  roll = roll_tables.build(rules)
  for size in (1, 9, 80):
    for start in range(1, roll.dice_states + 1):
      np.testing.assert_array_equal(
          roll_tables.reachable(roll, size, start),
          _loop_reachable(roll, size, start))


def _assert_same_tables(a, b):
  for x, y in zip(a, b):
    if isinstance(x, np.ndarray):
      assert x.dtype == y.dtype
      np.testing.assert_array_equal(x, y)
    else:
      assert x == y


def test_cached_roll_tables_are_the_built_ones(rules, tmp_path, monkeypatch):
  built = roll_tables.build(rules)
  _assert_same_tables(roll_cache.tables(rules, str(tmp_path)), built)
  assert len(os.listdir(tmp_path)) == 1
  monkeypatch.setattr(roll_tables, "build", None)   # now read, not built
  _assert_same_tables(roll_cache.tables(rules, str(tmp_path)), built)


def test_a_damaged_or_unwritable_cache_is_passed_over(tmp_path):
  rules = rules_lib.minimal()
  built = roll_tables.build(rules)
  roll_cache.tables(rules, str(tmp_path))
  (name,) = os.listdir(tmp_path)
  (tmp_path / name).write_bytes(b"not a zip")
  _assert_same_tables(roll_cache.tables(rules, str(tmp_path)), built)
  blocked = tmp_path / "file"
  blocked.write_text("")   # a folder that cannot be made
  _assert_same_tables(roll_cache.tables(rules, str(blocked / "x")), built)


def test_the_cache_file_names_the_rules_and_the_code(monkeypatch):
  facebook, minimal = rules_lib.facebook(), rules_lib.minimal()
  digest = roll_cache._digest(facebook)
  assert digest != roll_cache._digest(minimal)
  assert digest == roll_cache._digest(rules_lib.facebook())
  monkeypatch.setattr(roll_cache, "SOURCES", roll_cache.SOURCES[:-1])
  assert roll_cache._digest(facebook) != digest


def test_a_solved_game_says_what_it_is():
  game = SolvedGame.shipped("default")
  assert repr(game) == ("SolvedGame('shipped:default', players=2, "
                        "goal=3000, rules='facebook', keys=57600)")
