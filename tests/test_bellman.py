"""The JAX solver against the independent plain reference on tiny games."""

import numpy as np
import pytest

import reference
from farkle_jax.solver import bellman, driver, queries, results
from farkle_jax.game.layout import N_DICE
from configs import tiny


@pytest.fixture(scope="module", params=["facebook", "minimal"])
def solved(request, tmp_path_factory):
  workdir = str(tmp_path_factory.mktemp(request.param))
  config = tiny.get_config(request.param)
  driver.run(config, workdir)
  w0, layout, roll, summary = results.load(workdir)
  ref_w0, ref_v = reference.solve(request.param, config.rules.goal,
                                  config.rules.floor)
  return request.param, w0, layout, roll, summary, ref_w0, ref_v


def test_start_values_agree_with_reference(solved):
  _, w0, _, _, summary, ref_w0, _ = solved
  assert summary["converged"]
  assert w0.shape == ref_w0.shape
  np.testing.assert_allclose(w0, ref_w0, rtol=0, atol=1e-12)


def test_in_turn_values_agree_with_reference(solved):
  _, w0, layout, roll, _, ref_w0, ref_v = solved
  keys = np.array([0, layout.num_keys // 3, layout.num_keys - 1])
  got = bellman.turn_values(w0, keys, layout, roll)
  for i, k in enumerate(keys):
    idx = np.unravel_index(k, layout.key_shape)
    top = int(layout.t_max(idx[0]))
    for t in range(top + 1):
      for n in range(1, N_DICE + 1):
        assert abs(got[t, n - 1, i] - ref_v[t * 50][n - 1][idx]) < 1e-12


def test_a_querys_numpy_pass_agrees_with_reference(solved):
  """The row arithmetic run in NumPy for one key (`queries.Turns`, what a
  query asks) against the plain reference, as the jitted pass above."""
  _, w0, layout, roll, _, _, ref_v = solved
  turns = queries.Turns(w0, layout, roll)
  for k in (0, layout.num_keys // 3, layout.num_keys - 1):
    idx = np.unravel_index(k, layout.key_shape)
    got = turns.of(k).value
    for t in range(int(layout.t_max(idx[0])) + 1):
      for n in range(1, N_DICE + 1):
        assert abs(got[t, n - 1] - ref_v[t * 50][n - 1][idx]) < 1e-12


def test_values_are_probabilities_and_increase_with_turn_total(solved):
  _, w0, layout, roll, _, _, _ = solved
  assert ((w0 > 0) & (w0 < 1)).all()
  v = bellman.turn_values(w0, np.arange(20), layout, roll)
  assert (np.diff(v[:-1], axis=0) >= -1e-15).all()


def test_turn_table_actions(solved):
  name, w0, layout, roll, _, _, _ = solved
  top = int(layout.t_max(layout.index_of(0))) * 50
  full = queries.turn_table(w0, layout, roll, 0, 0, 0, 0, t_max=top)
  assert full["rows"][-1]["t"] == top
  first = full["rows"][0]
  assert first["t"] == 0 and first["action"]["6"] == "roll"
  assert first["unreachable"] == [5, 4, 3, 2, 1]
  for row in full["rows"]:
    if row["t"] < layout.rules.bank_minimum:
      assert set(row["action"].values()) == {"roll"}
    # Bank exactly where banking is worth at least as much as rolling.
    t = row["t"] // 50
    if t >= layout.bank_min:
      bank = 1 - w0[layout.index_of(0), t + layout.index_of(0), 0, 0] if (
          t + layout.index_of(0) < layout.num_scores) else 1.0
      for n, a in row["action"].items():
        assert (a == "bank") == (row["W"][n] == bank)
  # By default the table stops at the first total where every n banks, or
  # at the top when there is none (the tiny games roll on near the goal).
  all_bank = [i for i, r in enumerate(full["rows"])
              if set(r["action"].values()) == {"bank"}]
  end = all_bank[0] + 1 if all_bank else len(full["rows"])
  table = queries.turn_table(w0, layout, roll, 0, 0, 0, 0)
  assert table["rows"] == full["rows"][:end]
  # An opponent who never wins (W0 = 0): banking is worth 1, so every n
  # banks from the bank minimum on and the table stops there.
  sure = queries.turn_table(np.zeros_like(w0), layout, roll, 0, 0, 0, 0)
  assert sure["rows"][-1]["t"] == layout.rules.bank_minimum
  assert set(sure["rows"][-1]["action"].values()) == {"bank"}
