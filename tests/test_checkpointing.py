"""Checkpoints: float64 round trip, refusal of another model's checkpoint,
restore into the compiled sharding."""

import asyncio
import gc
import os
import subprocess
import sys
import types

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


def test_a_retired_field_of_an_older_checkpoint_is_left_out(tmp_path):
  x = jnp.ones((2, 2))
  ck = checkpointing.Checkpoints(str(tmp_path), {"rules": {}, "group": 512})
  ck.save(3, {"w": x})
  ck.close()
  step, _, _ = checkpointing.Checkpoints(
      str(tmp_path), {"rules": {}}, retired=("group",)).restore(_like(x))
  assert step == 3
  with pytest.raises(checkpointing.CheckpointMismatch, match="group"):
    checkpointing.Checkpoints(str(tmp_path), {"rules": {}}).restore(_like(x))


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


ON_FOUR_DEVICES = """
import sys
import jax
jax.config.update("jax_num_cpu_devices", 4)
import numpy as np, farkle_jax
from farkle_jax.game import roll_tables, rules as R
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import checkpointing, configuration, methods
from configs import tiny
rules, s = configuration.check(tiny.get_config("facebook"))
chunk = methods.compile_chunk(methods.build(
    StateLayout(rules, s.chunk_keys), roll_tables.build(rules), s), s)
target = chunk.checkpoint_target()["vector"]
assert len(target.sharding.device_set) == 4, target.sharding
saved = jax.device_put(chunk.method.init()[0], jax.devices()[0])
ck = checkpointing.Checkpoints(sys.argv[1], {"rules": "tiny"})
ck.save(1, {"vector": saved})
ck.close()
_, state, _ = checkpointing.Checkpoints(sys.argv[1], {"rules": "tiny"}).restore(
    chunk.checkpoint_target())
assert state["vector"].sharding.is_equivalent_to(target.sharding, 1), \\
    state["vector"].sharding
assert np.array_equal(np.asarray(state["vector"]), np.asarray(saved))
print("restored onto", len(state["vector"].sharding.device_set), "devices")
"""


def test_restore_lands_in_the_sharding_the_chunk_was_compiled_for(tmp_path):
  """Saved from one device, restored straight onto a 4-device mesh."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  # Four forced CPU devices: the CPU backend whatever the suite's (with
  # JAX_PLATFORMS=cuda the process would have the one GPU).
  out = subprocess.run([sys.executable, "-c", ON_FOUR_DEVICES,
                        str(tmp_path / "ck")], cwd=root,
                       env={**os.environ, "JAX_PLATFORMS": "cpu"},
                       capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stderr[-3000:]
  assert "restored onto 4 devices" in out.stdout


def test_a_loop_an_interrupt_left_half_closed_is_not_reported(monkeypatch):
  """A Ctrl-C that lands inside an event loop's `close()` (Orbax closing
  the loop of a save) leaves its self-pipe gone and the loop open; its
  finalizer then fails, an unraisable exception after the interrupt's one
  line. The hook logs it at DEBUG; anything else still reaches the hook
  that was there."""
  seen = []
  monkeypatch.setattr(sys, "unraisablehook", seen.append)
  checkpointing.Stragglers.install()
  loop = asyncio.new_event_loop()
  loop._close_self_pipe()     # where the interrupt stopped `close()`
  del loop
  gc.collect()                # its __del__ closes it again, and fails
  assert not seen
  try:
    raise ValueError("another")
  except ValueError as e:
    sys.unraisablehook(types.SimpleNamespace(
        exc_type=ValueError, exc_value=e, exc_traceback=e.__traceback__,
        err_msg=None, object=None))
  assert [u.exc_value.args for u in seen] == [("another",)]
