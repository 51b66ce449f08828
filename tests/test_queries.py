"""Reachability of in-turn states, turn-table formatting, and the NumPy
turn pass of a query against the solver's jitted one."""

import json
import os

import jax.numpy as jnp
import numpy as np
import pytest

from farkle_jax.solver import bellman, queries
from farkle_jax.game import rules as rules_lib
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.strategy.solved_game import SolvedGame

PUBLISHED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                        "published.json")))


def test_opening_turn_unreachable_states_match_published():
  rules = rules_lib.facebook()
  layout = StateLayout(rules)
  reach = queries.reachable(layout, roll_tables.build(rules),
                            layout.index_of(0))
  for row in PUBLISHED["facebook"]["opening_turn_slice"]["rows"]:
    t = row["t"] // 50
    unreachable = [n for n in range(6, 0, -1) if not reach[t, n - 1]]
    assert unreachable == row["unreachable"], row["t"]


def test_format_marks_bank_and_unreachable():
  table = {"b": 0, "d": 0, "f": 0, "e": 0, "rows": [
      {"t": 0, "W": {str(n): 0.5 for n in range(6, 0, -1)},
       "action": {str(n): "roll" for n in range(6, 0, -1)},
       "unreachable": [5, 4, 3, 2, 1]},
      {"t": 300, "W": {str(n): 0.25 for n in range(6, 0, -1)},
       "action": {str(n): "bank" for n in range(6, 0, -1)},
       "unreachable": []}]}
  text = queries.format_table(table)
  lines = text.splitlines()
  assert lines[2].split() == ["0", "0.500000", "-", "-", "-", "-", "-"]
  assert lines[3].split() == ["300"] + ["0.250000B"] * 6
  assert json.loads(queries.to_json(table)) == table


def _jax_rows(game, keys):
  """[T + 1, S, k] W and the value of rolling of some keys, by the
  solver's jitted turn pass (`bellman.turn_pass`)."""
  lay, w0 = game.layout, jnp.asarray(game.run.w0)
  fields = lay.key_fields(keys)
  rows = jnp.ones((lay.num_rows + 1, lay.dice_states, len(keys)), w0.dtype)
  value, _, rolled = bellman.compiled_turn_pass(
      rows, 1 - w0.reshape(-1)[lay.farkle_index(fields)],
      lay.padded_start(w0, jnp), jnp.asarray(lay.bank_base(fields)),
      jnp.asarray(int(lay.t_max(fields[0]).max()), jnp.int32),
      bellman.roll_arrays(game.run.roll), layout=lay, relative=False,
      rolls=True)
  return np.asarray(value), np.asarray(rolled)


@pytest.mark.parametrize("name", ["default", "facebook"])
def test_the_numpy_pass_of_a_key_is_the_jitted_pass(name):
  """A query's one-key pass in NumPy (`queries.Turns`, no JAX) gives the
  values and the values of rolling on of the solver's own pass, keys of
  every farkle count and score among them."""
  game = SolvedGame.shipped(name)
  lay = game.layout
  rng = np.random.default_rng(7)
  keys = np.concatenate([[0, lay.num_keys - 1,
                          lay.key_index(*lay.opening_key())],
                         rng.choice(lay.num_keys, 13, replace=False)])
  value, rolled = _jax_rows(game, keys)
  turns = queries.Turns(game.run.w0, lay, game.run.roll)
  for i, key in enumerate(keys):
    got = turns.of(key)
    top = int(lay.t_max(lay.key_fields(key)[0])) + 1
    np.testing.assert_allclose(got.value[:top], value[:top, :, i],
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(got.roll[:top], rolled[:top, :, i],
                               rtol=0, atol=1e-13)
    assert (got.value[top:] == 1).all()
  assert turns.of(keys[0]) is turns.of(keys[0])   # kept


def test_a_turn_table_is_the_jitted_pass_and_its_bank_ties():
  game = SolvedGame.shipped("default")
  lay, w0 = game.layout, game.run.w0
  table = queries.turn_table(w0, lay, game.run.roll, 500, 1000, 1, 2,
                             t_max=1500)
  key = lay.key_index(lay.index_of(500), lay.index_of(1000), 1, 2)
  value = _jax_rows(game, np.array([key]))[0][:, :, 0]
  for row in table["rows"]:
    for n, w in row["W"].items():
      assert abs(w - value[row["t"] // 50, int(n) - 1]) < 1e-13
  assert table == game.turn_table(500, 1000, 1, 2, 1500)
