"""The solved values that ship with the package are what they claim: the
rules of their config, and a fixed point of those rules' equations."""

import importlib

import numpy as np
import pytest

import reference
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import bellman
from farkle_jax.strategy import solved_game


@pytest.fixture(scope="module", params=solved_game.SHIPPED)
def shipped(request):
  return request.param, solved_game.SolvedGame.shipped(request.param)


def test_fingerprint_matches_the_config_it_names(shipped):
  name, game = shipped
  config = importlib.import_module(f"configs.{name}").get_config()
  claimed = rules_lib.from_mapping(config.rules.to_dict())
  summary = game.run.summary
  assert summary["rules"] == claimed.to_dict()
  assert summary["fingerprint"]["rules"] == claimed.to_dict()
  assert tuple(summary["fingerprint"]["key_shape"]) == StateLayout(
      claimed).key_shape
  assert summary["converged"] and summary["dtype"] == "float64"


def test_values_are_a_fixed_point_at_random_keys(shipped):
  _, game = shipped
  layout, w0 = game.layout, game.run.w0
  keys = np.random.default_rng(0).choice(layout.num_keys, 3000, replace=False)
  rows = bellman.turn_values(w0, keys, layout, game.run.roll)
  again = rows[0, 5]                       # W(t = 0, n = 6) of each key
  now = w0.reshape(-1)[keys]
  assert np.max(np.abs(again - now) / now) <= 1e-9


def test_independent_backup_agrees_at_a_few_keys(shipped):
  _, game = shipped
  rules, w0 = game.rules, game.run.w0
  rng = np.random.default_rng(1)
  for _ in range(4):
    key = tuple(int(rng.integers(s)) for s in w0.shape)
    want = reference.start_value("facebook", rules.goal, rules.floor, w0, key)
    assert abs(want - w0[key]) <= 1e-9 * w0[key], key


def test_a_damaged_copy_is_refused(tmp_path):
  import shutil
  from farkle_jax.solver import results
  src = solved_game.DATA + "/default"
  shutil.copytree(src, tmp_path / "d")
  w0 = np.load(tmp_path / "d" / "start_values.npz")["start_values"]
  w0[3, 4, 0, 0] += 1e-12
  np.savez_compressed(tmp_path / "d" / "start_values.npz", start_values=w0)
  with pytest.raises(results.ResultsError, match="checksum"):
    solved_game.SolvedGame.load(str(tmp_path / "d"))
