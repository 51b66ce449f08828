"""Three or more players swept as a wavefront (`solver.method =
"wavefront"`; docs/model.md §8, "The wavefront for N players").

The stage engine's state, checkpoints and results (`stage_engine`), with
each sweep one compiled call of `seat_wavefront.sweep`: a few hundred
loop steps where the stage engine takes thousands, the accelerator's
shape, its columns split over the process's devices. Rules it does not
run, and a game too large for the devices' memory, are refused before
anything is built; a game whose sweeps alternate (a
rotation cycle without an equilibrium in pure turn policies, which the
stage engine settles at a midpoint) stops with one line naming the stage
engine.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.rules import Rules
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (bellman, checkpointing, memory, methods,
                               multiplayer, placement, seat_wave_counts,
                               seat_wave_schedule, seat_wavefront,
                               stage_engine, sweep_counts, wave_kernel)
from farkle_jax.solver.configuration import ConfigError, Settings
from farkle_jax.solver.engine import Chunk, Progress
from farkle_jax.solver.stage_engine import SeatSweep

ALTERNATING = 0.5   # a sweep whose change is over this share of the one two
                    # sweeps before, after SETTLING sweeps, alternates
SETTLING = 6


def lower_for_target(seats: SeatsLayout, settings: Settings):
  """A sweep lowered for the GPU aimed at (`compile_target.aiming`: not
  runnable here, compiled; its compile time and kernels are the GPU's),
  or else for this process's devices."""
  mesh = placement.make_mesh()
  copies = placement.everywhere(mesh)
  tables, plan = build(seats, settings, mesh.size)
  spec = lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=copies)
  w0 = jax.ShapeDtypeStruct(multiplayer.values_shape(seats), jnp.float64,
                            sharding=copies)
  return jax.jit(functools.partial(seat_wavefront.sweep, mesh=mesh),
                 static_argnames="plan").lower(
      w0, jax.tree.map(spec, tables), plan=plan)


def build(seats: SeatsLayout, settings: Settings, devices: int = 1
          ) -> tuple[seat_wavefront.SeatWaveTables,
                     seat_wavefront.SeatWavePlan]:
  """The sweep's tables and plan for its columns split over `devices`,
  its chunk's row as `config.solver.kernel` asks (the fused kernel on one
  GPU where a chunk fills it, as two players: `methods.wave_kernel_for`,
  which refuses the kernel asked for on several devices)."""
  tables, plan = seat_wavefront.build(
      seats, bellman.roll_arrays(roll_tables.build(seats.rules)),
      settings.norm == "relative", devices)
  return tables, plan._replace(kernel=methods.wave_kernel_for(
      settings.kernel, devices, plan.chunk))


COUNTED_KEYS = 10_000_000   # above, XLA's bytes are not counted: they need
                            #   the per-key tables built


def counts(seats: SeatsLayout, settings: Settings
           ) -> sweep_counts.SweepCounts:
  """One sweep's counts: its schedule's from the sizes
  (`seat_wave_schedule`), and up to `COUNTED_KEYS` keys XLA's bytes of the
  sweep as built here (for this backend, or the GPU aimed at) and its
  kernels' where they run (`seat_wave_counts`)."""
  sized = seat_wave_schedule.plan(seats).counts
  if seats.num_keys > COUNTED_KEYS:
    return sized
  tables, plan = build(seats, settings)
  busy = (None if plan.kernel == "xla" else seat_wave_counts.busy_rows(
      tables, plan, wave_kernel.TUNING.tile))
  return sized._replace(
      xla_bytes_accessed=seat_wave_counts.xla_bytes(tables, plan,
                                                    settings.dtype, busy),
      kernel_bytes=seat_wave_counts.kernel_bytes(tables, plan,
                                                 settings.dtype, busy),
      kernel_rows=busy or 0)


class Alternating(RuntimeError):
  """The sweeps alternate between two policy profiles."""


def need_bytes(seats: SeatsLayout, devices: int = 1) -> int:
  """The memory of a solve on each of `devices` devices: its share of the
  rings and the start vectors of the schedule (`seat_wave_schedule.plan`),
  the vectors' donated copy, and the per-key tables (about ten int32 a
  key, on every device); split over several (the rings in column blocks,
  `wave_columns`), a move's chunk gathered from the others: its ring
  columns (in the program compiled for four host devices, an all-reduce
  of [rows, C] float64 and an all-gather of its C column indices)."""
  wave = seat_wave_schedule.plan(seats, devices)
  width = max(wave.widths)
  gathered = wave.ring_bytes // 2 * wave.chunk // width if devices > 1 else 0
  return (wave.device_bytes + wave.vector_bytes + gathered
          + 40 * (seats.num_keys + 1))


class SeatWaveEngine(stage_engine.StageEngine):
  """N players, a sweep a wavefront (see `driver.Engine`)."""
  method = "wavefront"

  def __init__(self, rules: Rules, settings: Settings):
    """Refuses rules the wavefront does not run, or a game that does not
    fit, in one line."""
    stage_engine.check_settings(rules, settings)   # float64, as the stages
    self.seats, self.settings = SeatsLayout(rules), settings
    why = seat_wavefront.unsupported(self.seats)
    if why:
      raise ConfigError(
          f"config.solver.method = 'wavefront' does not run {why} with "
          f"rules.players = {rules.players}: use 'seats' (or 'auto')")
    self.rules, self.num_states = rules, self.seats.num_states
    devices = jax.device_count()
    need = memory.shared_need(need_bytes(self.seats, devices), devices)
    have = memory.available_bytes(on_device=True)
    if settings.memory_limit_gb is not None:
      have = (int(settings.memory_limit_gb * 2**30), "memory_limit_gb")
    # The stage engine, named where it fits (it keeps no rings).
    group = stage_engine.group_size(settings, self.seats)
    staged = memory.shared_need(stage_engine.footprint(self.seats, group)[1])
    self.need = memory.check(
        need, f"the wavefront of {rules.players} players, "
        f"{self.seats.num_keys:,} keys", have,
        ["solver.method='seats'"] if staged <= 0.8 * have[0] else [],
        share=0.8)
    logging.info("%d players, rules %s: %s keys, %s model states, the "
                 "wavefront on %d device(s); memory estimate %.2f GB",
                 rules.players, rules.name,
                 f"{self.seats.num_keys:,}", f"{self.num_states:,}",
                 devices, self.need / 2**30)

  def build(self) -> int:
    self.mesh = placement.make_mesh()
    tables, self.plan = build(self.seats, self.settings, self.mesh.size)
    copies = placement.everywhere(self.mesh)   # the tables on every device
    self.tables = jax.tree.map(lambda x: placement.place(x, copies), tables)
    self.sweep = jax.jit(
        functools.partial(seat_wavefront.sweep, mesh=self.mesh),
        static_argnames="plan", donate_argnums=0)
    return self.need

  def advance(self, p: Progress, sweeps: int,
              ckpt: checkpointing.Checkpoints) -> Chunk:
    """One sweep, one compiled call."""
    del sweeps, ckpt
    t0 = time.time()
    # A run's first sweep (never a resumed one: checkpoints follow sweeps)
    # starts from the first guesses.
    w0, change = self.sweep(p.state.w0, self.tables, plan=self.plan,
                            fresh=p.iteration == 0)
    change = float(change)   # waits for the sweep
    logging.info("sweep %d: %.2f s", p.iteration + 1, time.time() - t0)
    self._check_settling(p.history + [change])
    done = SeatSweep(w0, 0, 0.0, 0, 0.0, 0.0, 0, 0.0)
    return Chunk(done, 1, change, [change], 1.0, self.plan.steps)

  def _check_settling(self, history: list[float]) -> None:
    """Raises `Alternating` where the sweeps stopped shrinking their
    change while still above the tolerance."""
    last = history[-1]
    if (len(history) > SETTLING and last >= self.settings.tol
        and last > ALTERNATING * history[-3]):
      raise Alternating(
          f"the wavefront's sweeps alternate (changes {history[-3]:.2e}, "
          f"{history[-2]:.2e}, {last:.2e}): some rotation cycle has no "
          "equilibrium in pure turn policies; config.solver.method='seats' "
          "keeps a midpoint there (docs/model.md §8)")

  def _save(self, ckpt: checkpointing.Checkpoints, p: Progress,
            x: SeatSweep) -> None:
    pos = stage_engine.Position(p.iteration, 0, x.change, p.history,
                                p.steps, p.work, p.sweep_seconds, 0, 0.0)
    ckpt.save(p.iteration, {"w0": x.w0},
              {"position": pos._asdict(), "trace": p.trace})

  def fields(self, p: Progress) -> dict:
    out = super().fields(p)
    out["turn_passes"] = 0   # a sweep is wave steps, not stage passes
    return {**out, "wave_steps_per_sweep": self.plan.span,
            "dependent_steps_per_sweep": self.plan.steps}
