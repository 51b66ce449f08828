"""Test setup: the platform, float64, repository root importable.

The tests run on the CPU unless JAX_PLATFORMS names another platform
(`JAX_PLATFORMS=cuda python -m pytest -q` on a GPU machine); the subprocess
tests inherit the choice through the environment.
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The suite runs in two processes (pytest-xdist): on a GPU they share it,
# so neither may take most of its memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
# Scripts the tests start (python experiments/x.py) import the package from
# this checkout, installed or not (a GPU machine runs the suite from a copy).
os.environ["PYTHONPATH"] = os.pathsep.join(
    [ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])
sys.path.insert(0, os.path.join(ROOT, "tests"))

import farkle_jax  # noqa: E402,F401  (enables float64)

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory):
  """Solved tiny games (configs/tiny.py), by name: (w0, layout, roll)."""
  from farkle_jax.solver import driver, results
  from configs import tiny
  cache = {}

  def get(name):
    if name not in cache:
      workdir = str(tmp_path_factory.mktemp(f"tiny_{name}"))
      driver.run(tiny.get_config(name), workdir)
      cache[name] = results.load(workdir)[:3] + (workdir,)
    return cache[name]

  return get


@pytest.fixture(scope="session")
def three_players(tmp_path_factory):
  """The workdir of a solved three-player game: minimal rules to 500."""
  from farkle_jax.solver import configuration, driver
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  workdir = str(tmp_path_factory.mktemp("three_players"))
  driver.run(config, workdir)
  return workdir


@pytest.fixture(scope="session")
def unsettled_game(tmp_path_factory):
  """A solved game with one rotation cycle that has no equilibrium in pure
  turn policies (three players, minimal rules to 1,500): (config, summary,
  start values)."""
  import numpy as np
  from farkle_jax.solver import configuration, driver
  config = configuration.base("minimal")
  config.rules.update(goal=1500, players=3)
  config.solver.update(tol=1e-14, norm="absolute")
  workdir = str(tmp_path_factory.mktemp("unsettled"))
  summary = driver.run(config, workdir)
  return config, summary, np.load(f"{workdir}/start_values.npy")
