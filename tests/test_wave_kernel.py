"""The wavefront's fused kernels (Pallas, interpreted on the CPU) against
XLA's step: a chunk's row and a ring move on tiny, minimal and default
games, and whole solves against the plain reference."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reference
from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import (bellman, configuration, methods, wave_kernel,
                               wavefront)
from test_ordered import settings

GAMES = {
    "tiny": rules_lib.facebook(floor=-500, goal=1000),
    "minimal": rules_lib.minimal(goal=2000),
    "default": rules_lib.facebook(floor=-1000, goal=3000),
}


def _columns(plan, layout, seed, levels=None):
  """Loop state with random values in (0, 1) and pointers inside columns;
  ring values on `levels` - 1 levels only, if given (options then tie, and
  the first best option's slope must be the one kept)."""
  rng = np.random.default_rng(seed)
  rows = plan.ring_rows * 6
  vector = rng.uniform(0.01, 0.99, layout.padded_size)
  ring = (rng.integers(1, levels, (2, rows, plan.width)) / levels
          if levels else rng.uniform(0.01, 0.99, (2, rows, plan.width)))
  return wavefront._Columns(
      jnp.asarray(vector), jnp.asarray(ring),
      jnp.asarray(rng.uniform(-1, 1, (2, rows, plan.sloped_width)),
                  jnp.float32),
      jnp.zeros((plan.width,), jnp.int32), jnp.asarray(seed % 2 == 0))


@functools.lru_cache(maxsize=None)
def _built(name):
  """(layout, tables, plan) of GAMES[name], built once for the tests that
  use it (only read: a step returns new arrays)."""
  layout = StateLayout(GAMES[name])
  roll = bellman.roll_arrays(roll_tables.build(layout.rules))
  tables, plan = wavefront.build(layout, roll, relative=True)
  return layout, tables, plan


# tiny (Facebook rules, the chunk default also checks, narrower) in the
# thorough tier.
HELD = {"tile": 64, "held": True}


@pytest.mark.parametrize("name, cut", [
    pytest.param("tiny", {}, marks=pytest.mark.thorough), ("minimal", {}),
    ("default", {}), ("minimal", HELD), ("minimal", {"split": False}),
    pytest.param("default", {"split": False}, marks=pytest.mark.thorough),
    pytest.param("default", {"per_dice": True, "split": False},
                 marks=pytest.mark.thorough),
    pytest.param("default", HELD, marks=pytest.mark.thorough)])
def test_a_chunk_row_is_xla_step_to_rounding(monkeypatch, name, cut):
  """The kernel (`cut`: the `wave_kernel.Tuning` fields changed; HELD, the
  kernel that reads each target once per tile; per_dice, each set added
  to its own dice count's sum alone; split off, a program per tile, not
  per tile and dice count) against XLA's step, but for the
  tiles of idle columns, which the kernel skips (their rows kept), on
  ring values of four levels (options tie: the first best one's slope is
  kept), a middle segment's middle step, its first chunk (with slopes
  where the segment has them) and its last."""
  monkeypatch.setattr(wave_kernel, "TUNING", wave_kernel.Tuning(**cut))
  layout, tables, plan = _built(name)
  m = len(plan.widths) // 2
  tau = (plan.bounds[m] + plan.bounds[m + 1]) // 2
  c = _columns(plan, layout, seed=m, levels=5)
  chunks = plan.widths[m] // plan.chunk
  sloped_chunks = plan.sloped[m] // plan.chunk
  idle_tiles = 0
  for j, sloped in ((0, sloped_chunks > 0), (chunks - 1, False)):
    if sloped is False and chunks - 1 < sloped_chunks:
      continue
    out = {}
    for kernel in ("xla", "interpret"):
      step = jax.jit(lambda c, tables, p=plan._replace(kernel=kernel),
                     s=sloped: wavefront._chunk_step(
                         tau, m, j, c, tables, p, s, lambda x: x))
      out[kernel] = jax.tree.map(np.asarray, step(c, tables))
    xla, fused = jax.tree.map(np.array, out["xla"]), out["interpret"]
    # The kernel skips the tiles of idle columns: they keep their rows.
    idle = plan.chunk * j + np.flatnonzero(~_busy_columns(tau, m, j, c,
                                                          tables, plan))
    idle_tiles += idle.size // wave_kernel.TUNING.tile
    xla.ring[:, :, idle] = np.asarray(c.ring)[:, :, idle]
    slopes = idle[idle < xla.tangent.shape[2]]
    xla.tangent[:, :, slopes] = np.asarray(c.tangent)[:, :, slopes]
    # Sums of up to 228 products, the kernel's compensated, XLA's dot in
    # its own order: they differ by XLA's rounding (1.2e-15 seen on a CPU;
    # a GPU's dot adds in another order: 2.1e-15 seen).
    ulps = 1e-15 if jax.default_backend() == "cpu" else 4e-15
    np.testing.assert_allclose(fused.ring, xla.ring, rtol=ulps, atol=ulps)
    np.testing.assert_array_equal(fused.pointer, xla.pointer)
    np.testing.assert_allclose(fused.tangent, xla.tangent, rtol=0, atol=1e-6)
    assert not np.array_equal(xla.ring, np.asarray(c.ring))  # rows written
  # The skip is exercised: 3 to 12 idle tiles in these cases (tiny's
  # middle step has none).
  assert idle_tiles > 0 or name == "tiny"


def _busy_columns(tau, m, j, c, tables, plan) -> np.ndarray:
  """[C] bool: the columns of chunk j of segment m in a tile with a live
  column at step `tau` (the kernel's work; idle: t < 0 or t > t_max)."""
  keys = wavefront._chunk_keys(tau, m, j, c, tables, plan, lambda x: x)
  live = np.asarray((keys.t >= 0) & (keys.margin >= 0))
  tile = wave_kernel.TUNING.tile
  return np.repeat(live.reshape(-1, tile).any(axis=1), tile)


def test_sets_read_together_sum_as_one_at_a_time(monkeypatch):
  """Three sets at a time (minimal's 21 groups of sets of one option
  count and one dice count, 2 to 23 sets, end in remainders of 0, 1 and
  2), the kernel with a program per dice count (`split`, the default)
  adds the same terms in the same order as the kernel per tile that adds
  each set to its own dice count's sum, one set at a time: the same
  bits."""
  layout, tables, plan = _built("minimal")
  m = len(plan.widths) // 2
  tau = (plan.bounds[m] + plan.bounds[m + 1]) // 2
  c = _columns(plan, layout, seed=5, levels=5)
  out = []
  # Two tiles of the chunk: the kernel's programs are alike, and each
  # costs a loop iteration in the interpreter.
  narrow = plan._replace(kernel="interpret", chunk=256)
  for unroll, split in ((1, False), (1, True), (3, True)):
    monkeypatch.setattr(wave_kernel, "TUNING", wave_kernel.Tuning(
        unroll=unroll, per_dice=True, split=split))
    step = jax.jit(lambda c, tables, p=narrow:
                   wavefront._chunk_step(tau, m, 0, c, tables, p, True,
                                         lambda x: x))
    out.append(jax.tree.map(np.asarray, step(c, tables)))
  for other in out[1:]:
    np.testing.assert_array_equal(out[0].ring, other.ring)
    # The float32 slopes to a unit or two of their last place: the CPU's
    # compiler may fuse a multiply and an add in one loop body and not in
    # another (seen: 40 of 440,832 entries, at most 6e-8).
    np.testing.assert_allclose(out[0].tangent, other.tangent, rtol=0,
                               atol=2.4e-7)
  assert not np.array_equal(out[1].ring, np.asarray(c.ring))


def test_a_ring_move_is_xla_move():
  layout, tables, plan = _built("default")
  c = _columns(plan, layout, seed=3)
  m = len(plan.widths) - 1
  for j, sloped in ((0, True), (plan.widths[m] // plan.chunk - 1, False)):
    out = {}
    for kernel in ("xla", "interpret"):
      move = jax.jit(lambda c, tables, p=plan._replace(kernel=kernel),
                     s=sloped: wavefront._move_chunk(m, j, c, tables, p, s,
                                                     lambda x: x))
      out[kernel] = jax.tree.map(np.asarray, move(c, tables))
    np.testing.assert_array_equal(out["interpret"].ring, out["xla"].ring)
    np.testing.assert_array_equal(out["interpret"].tangent,
                                  out["xla"].tangent)


@pytest.mark.parametrize("name, held", [
    ("facebook", False), ("minimal", False),
    pytest.param("facebook", True, marks=pytest.mark.thorough)])
def test_whole_solves_with_the_kernel_agree_with_the_reference(
    name, held, monkeypatch):
  """minimal: solved from the initial values. facebook (a penalty: the
  stale penalty reads and the carried slopes): two sweeps from the
  reference's fixed point must keep it (the interpreted kernel takes
  seconds a sweep there; a whole solve took a minute). Held: the kernel
  that reads each target once per tile (thorough: a second kernel)."""
  monkeypatch.setattr(wave_kernel, "TUNING", wave_kernel.Tuning(
      **(HELD if held else {})))
  rules = {"facebook": rules_lib.facebook(floor=-500, goal=1000),
           "minimal": rules_lib.minimal(goal=1000)}[name]
  layout = StateLayout(rules, chunk_keys=512)
  chosen = settings(method="wavefront", tol=1e-15, kernel="pallas")
  method = methods.build(layout, roll_tables.build(rules), chosen)
  chunk = methods.compile_chunk(method, settings(tol=1e-15))
  ref, _ = reference.solve(name, 1000, -500)
  if name == "minimal":
    out = chunk.run(method.init(), float("inf"), 200)
    assert out.residual < 1e-15
  else:
    start = (jnp.asarray(layout.padded_start(ref)), jnp.zeros((), bool))
    out = chunk.run(start, float("inf"), 2)
    assert out.done >= 1 and out.residual < 1e-13
  np.testing.assert_allclose(method.start_values(out.state), ref, rtol=0,
                             atol=1e-12)


def test_the_kernel_setting_is_checked():
  config = configuration.base("facebook")
  config.solver.kernel = "cuda"
  with pytest.raises(configuration.ConfigError, match="solver.kernel"):
    configuration.check(config)
  wide = methods.MIN_TILES * wave_kernel.TUNING.tile
  on_gpu = jax.default_backend() == "gpu"
  assert methods.wave_kernel_for("auto", 1, wide) == (
      "pallas" if on_gpu else "xla")
  assert methods.wave_kernel_for("auto", 1, wide - 128) == "xla"
  assert methods.wave_kernel_for("auto", 2, wide) == "xla"
  assert methods.wave_kernel_for("pallas", 1, 128) == (
      "pallas" if on_gpu else "interpret")
  with pytest.raises(configuration.ConfigError, match="one device"):
    methods.wave_kernel_for("pallas", 4, wide)


def test_a_kernel_that_does_not_compile_falls_back_to_xla(monkeypatch,
                                                          tmp_path, caplog):
  """Where the fused kernel is chosen for the device (auto) and fails to
  compile, the solve runs XLA's step and says so in one line."""
  from farkle_jax.solver import driver
  from configs import tiny

  def refuse(*args, **kwargs):
    raise NotImplementedError("no Triton here\nsecond line")

  monkeypatch.setattr(methods, "wave_kernel_for",
                      lambda kernel, devices, columns: "interpret"
                      if kernel == "auto" else kernel)
  monkeypatch.setattr(wave_kernel, "chunk_row", refuse)
  config = tiny.get_config("minimal")
  config.solver.method = "wavefront"
  summary = driver.run(config, str(tmp_path))
  assert summary["converged"] and summary["method"] == "wavefront"
  said = [r.getMessage() for r in caplog.records
          if "fused kernel did not compile" in r.getMessage()]
  assert said == ["the fused kernel did not compile (no Triton here); the "
                  "wavefront runs XLA's step"]
