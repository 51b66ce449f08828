"""Checkpoints: float64 round trip, refusal of another model's checkpoint."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from farkle_jax.solver import checkpointing


def _like(x):
  return {"w": jax.ShapeDtypeStruct(x.shape, x.dtype)}


def test_float64_survives_save_and_restore(tmp_path):
  x = jnp.asarray(np.random.default_rng(0).random((3, 4, 2, 2)))
  assert x.dtype == jnp.float64
  ck = checkpointing.Checkpoints(str(tmp_path), {"rules": {"goal": 1000}})
  ck.save(7, {"w": x})
  ck.close()
  step, state, meta = checkpointing.Checkpoints(
      str(tmp_path), {"rules": {"goal": 1000}}).restore(_like(x))
  assert step == 7 and state["w"].dtype == jnp.float64
  assert np.array_equal(np.asarray(state["w"]), np.asarray(x))
  assert meta["fingerprint"] == {"rules": {"goal": 1000}}


def test_mismatched_model_is_refused(tmp_path):
  x = jnp.zeros((2, 2))
  ck = checkpointing.Checkpoints(str(tmp_path),
                                 {"rules": {"floor": -2500}, "dtype": "f64"})
  ck.save(1, {"w": x})
  ck.close()
  other = checkpointing.Checkpoints(str(tmp_path),
                                    {"rules": {"floor": -3000}, "dtype": "f64"})
  with pytest.raises(checkpointing.CheckpointMismatch,
                     match=r"rules.floor: checkpoint -2500, this run -3000"):
    other.restore(_like(x))
