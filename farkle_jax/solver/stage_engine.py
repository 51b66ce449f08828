"""Three or more players: the stage sweeps of `multiplayer` (§8).

The engine behind `driver.run` when `rules.players > 2`: every key's win
probabilities by seat, swept stage by stage in the ordered method's order
(under a penalty a block of stages at a time, `penalty_blocks`).
A sweep is one chunk; within a long sweep a checkpoint saves its position
every few minutes, so a crash loses little. The results are
workdir/summary.json, workdir/start_values.npy ([B] * N + [F] * N + [N]:
every key's win probabilities by seat from the player to move) and
workdir/seats.txt.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.rules import Rules
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, checkpointing, configuration
from farkle_jax.solver import integrity, last_turns, memory, multiplayer
from farkle_jax.solver import placement, results
from farkle_jax.solver import seat_newton, seat_sweep
from farkle_jax.solver.configuration import ConfigError, Settings
from farkle_jax.solver.engine import Chunk, Progress, clock, fingerprint

SAVE_SECONDS = 300   # a checkpoint within a sweep at least this often
LOG_SECONDS = 30     # a progress line at least this often
CALL_SECONDS = 30    # at most about this long in one compiled run of steps
                     # (`seat_sweep`): a quicker sweep is one call
CPU_GROUP = 256      # keys per sub-batch on a CPU: a turn of 3 players
                     # to 1,000 in L2 (256 keys: 2.86e6 states/s, 512: 2.11e6)
CPU_SMALLEST = 32    # ... and at least: smaller, the loop's steps cost more
                     # than the padded rows they spare
COUNT_CELLS = 10**7  # past this many cells the keys per score are not
                     # counted (`SeatsLayout.stage_scores`: B x (N-1) B),
                     # before the memory check refuses such a game in one line


class Position(NamedTuple):
  """Where a solve stands (what a checkpoint holds besides w0; its format
  predates the one driver, so older runs resume)."""
  sweep: int            # sweeps finished
  stage: int            # stages of the current sweep finished
  change: float         # largest change so far in the current sweep
  history: list         # largest change of every finished sweep
  passes: int           # turn passes of stages, all sweeps
  work: float           # states evaluated, in passes over all states
  seconds: float        # time spent sweeping
  unsettled: int        # keys left unsettled by the last finished sweep
                        #   (within a sweep: by its stages so far)
  apart: float          # and how far their last two policy steps were


def group_size(settings: Settings, seats: SeatsLayout,
               backend: str | None = None) -> int:
  """Keys per sub-batch: `solver.chunk_keys`; on a CPU, at most a power of
  two near twice a stage's keys per mover's score, within `CPU_SMALLEST` ..
  `CPU_GROUP`. A sub-batch's keys then span about one banked score, and
  the rows its shorter turns pad are few: with two players
  (`configs/default.py`, 10 keys per score) 32 keys passed the stages 1.5x
  as fast as 256; with three (to 1,000, 325 per score) 256 were fastest.
  `backend` defaults to JAX's."""
  if (backend or jax.default_backend()) != "cpu":
    return settings.chunk_keys
  B = seats.num_scores
  if B * B * (seats.players - 1) > COUNT_CELLS:
    return min(settings.chunk_keys, CPU_GROUP)
  per_score = seats.stage_scores()
  fit = 2 * per_score[per_score > 0].mean()
  fit = 1 << int(np.ceil(np.log2(max(fit, 1))))
  return min(settings.chunk_keys, int(np.clip(fit, CPU_SMALLEST,
                                               CPU_GROUP)))


def lower_for_target(seats: SeatsLayout, settings: Settings) -> Any:
  """The sweep lowered for the GPU aimed at (`compile_target.aiming`):
  its run of steps (`seat_sweep`, stages without a penalty, blocks under
  one), the Newton step's exits left out, with a GPU's sub-batches. Not
  runnable here (compiled); its compile time and kernels are the GPU's."""
  target = placement.aimed()
  tables, plan = multiplayer.build(seats, group_size(settings, seats, "gpu"),
                                   settings.norm == "relative", mesh=target)
  copies = placement.everywhere(target)

  def spec(x, where):
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=where)

  tables = jax.tree.map(spec, tables,
                        multiplayer.table_shardings(tables, target))
  roll = jax.tree.map(lambda x: spec(x, copies), bellman.roll_arrays(
      roll_tables.build(seats.rules)))
  w0 = jax.ShapeDtypeStruct(multiplayer.values_shape(seats), jnp.float64,
                            sharding=copies)
  index = jax.ShapeDtypeStruct((), jnp.int32, sharding=copies)
  first = jax.ShapeDtypeStruct((), jnp.bool_, sharding=copies)
  return seat_sweep.compiled_steps.lower(w0, tables, index, index, first,
                                         roll, plan)


def check(config: ml_collections.ConfigDict) -> tuple[SeatsLayout, Settings]:
  """Validates a config for N players (before any compute)."""
  rules, settings = configuration.check(config)
  check_settings(rules, settings)
  return SeatsLayout(rules), settings


def check_settings(rules: Rules, settings: Settings) -> None:
  # 'wavefront' runs `seat_wave_engine` (driver.engine_for), which says
  # which rules it does not run.
  if settings.method not in ("auto", "ordered", configuration.SEATS,
                             "wavefront"):
    raise ConfigError(
        f"config.solver.method = {settings.method!r} is not allowed: 'auto', "
        f"'ordered', 'seats' or 'wavefront' with rules.players = "
        f"{rules.players}")
  if settings.dtype != "float64":
    raise ConfigError(f"config.solver.dtype = {settings.dtype!r} is not "
                      "allowed: 'float64' with more than two players")


def footprint(seats: SeatsLayout, group: int, devices: int | None = None,
              newton: bool = False) -> tuple[int, int]:
  """Estimated peak (host, device) bytes of a solve over `devices`
  (default: every device): each device holds the values whole and its own
  sub-batches of the tables (`multiplayer.table_shardings`); a host, the
  tables whole while it builds them; with `newton`, every device the
  Newton step's exits (`seat_newton`)."""
  host, values = _key_bytes(seats)
  if max(host, values) > _BEYOND:   # no machine: skip the stage sizes
    return host + memory.RUNTIME_BYTES, values + memory.RUNTIME_BYTES
  D = jax.device_count() if devices is None else devices
  S, U, G = multiplayer.plan_sizes(seats, group, D)
  n = seats.players
  tables = S * U * G * (8 * 4 + 1)
  turns = (seats.num_rows + 1) * seats.dice_states * (n + 1) * G * 8 * 3
  stage = U * G * (n + 1) * 8 * 12
  # A block under a penalty: its values before, read, solved and the
  # doubling's copies, [N, stages_per_block * U * G] each.
  block = 8 * seats.stages_per_block * U * G * n * 8
  if newton:
    block += seat_newton.footprint(seats, S, U * G)
  device = (values + tables // D + turns + stage + block
            + last_turns.footprint(seats) + memory.RUNTIME_BYTES)
  return max(host, tables) + memory.RUNTIME_BYTES, device


# Larger than any memory: an estimate past it need not be exact.
_BEYOND = 2**50


def _key_bytes(seats: SeatsLayout) -> tuple[int, int]:
  """(host, device) bytes that grow with the keys alone, in closed form:
  a lower bound of `footprint` that costs nothing to compute."""
  n, K = seats.players, seats.num_keys
  values = (K + 1) * n * 8 * 3             # w0, its donated copy, a gather
  host = K * 8 * (2 * n + 12)              # NumPy fields and orders
  return host, values


def _devices_that_fit(seats: SeatsLayout, group: int, per_device: float,
                      most: int = 64) -> int | None:
  """The fewest devices (up to `most`) of `per_device` bytes each that
  hold the solve: the values are whole on each, so past some count more
  do not help, and padding a stage to a multiple of them can cost more."""
  for devices in range(1, most + 1):
    if footprint(seats, group, devices)[1] <= per_device:
      return devices
  return None


def _need(seats: SeatsLayout, group: int, newton: bool = False) -> int:
  host, device = footprint(seats, group, newton=newton)
  if jax.default_backend() != "cpu":
    return device
  return max(host, memory.shared_need(device))


def plan_memory(seats: SeatsLayout, settings: Settings, group: int
                ) -> tuple[int, bool]:
  """Refuses (MemoryRefused) a solve that cannot fit; returns the bytes
  and whether the sweeps take the Newton step: under a penalty where
  `solver.newton` is True, or None and its exits fit. Every setting a
  refusal offers is checked to fit by the same estimate."""
  have = memory.available_bytes(on_device=True)
  if settings.memory_limit_gb is not None:
    have = (int(settings.memory_limit_gb * 2**30), "memory_limit_gb")
  newton = settings.newton is not False and seats.penalty != 0
  need = _need(seats, group, newton)
  if newton and settings.newton is None and need > 0.8 * have[0]:
    logging.info("Newton step off: its exits do not fit (%.2f GB)",
                 need / 2**30)
    newton, need = False, _need(seats, group)
  if need <= 0.8 * have[0]:
    return need, newton
  fits = lambda r: _need(SeatsLayout(r), group, newton) <= 0.8 * have[0]
  hints = _smaller(seats, fits)
  if newton and _need(seats, group) <= 0.8 * have[0]:
    hints.insert(0, "solver.newton=False")
  if jax.default_backend() != "cpu":   # a CPU's devices share one memory
    more = _devices_that_fit(seats, group, 0.8 * have[0])
    if more and more > jax.device_count():
      hints.append(f"{more} devices (--num_processes, docs/model.md §8)")
  return memory.check(need, f"{seats.players} players, "
                      f"{seats.num_keys:,} keys", have, hints,
                      share=0.8), newton


def _smaller(seats: SeatsLayout, fits) -> list[str]:
  """The largest goal, the highest floor, one player fewer that `fits`
  (a predicate on rules) accepts, as config settings."""
  r, unit, hints = seats.rules, seats.rules.step, []
  lowest_goal = -(-max(r.bank_minimum, unit, r.low + unit) // unit)
  goal = memory.largest_fitting(lowest_goal, r.goal // unit - 1,
                                lambda g: fits(r.replace(goal=g * unit)))
  if goal is not None:
    hints.append(f"rules.goal={goal * unit} or lower")
  if r.has_penalty:   # a higher floor: fewer scores below 0
    depth = memory.largest_fitting(0, -(r.floor // unit) - 1,
                                   lambda x: fits(r.replace(floor=-x * unit)))
    if depth is not None:
      hints.append(f"rules.floor={-depth * unit} or higher")
  if seats.players > 3 and fits(r.replace(players=seats.players - 1)):
    hints.append(f"rules.players={seats.players - 1}")
  return hints


class SeatSweep(NamedTuple):
  """The engine's state: the values and where the current sweep stands
  (its counts are those since the driver's totals)."""
  w0: jax.Array        # [K + 1, N] win probabilities by seat, per key
  stage: int           # stages of the current sweep finished
  change: float        # largest change so far in the current sweep
  passes: int          # turn passes since the totals
  work: float          # states evaluated since the totals, in sweeps
  seconds: float       # time swept since the totals
  unsettled: int       # keys left unsettled by the last finished sweep
                       #   (within a sweep: by its stages so far)
  apart: float         # and how far their last two policy steps were


class StageEngine:
  """Three or more players swept stage by stage (see `driver.Engine`)."""
  method = configuration.SEATS
  retired = ("group",)   # the sub-batch size, once part of the fingerprint

  def __init__(self, rules: Rules, settings: Settings):
    """Refuses what N players do not support, or cannot fit."""
    check_settings(rules, settings)
    self.seats, self.settings = SeatsLayout(rules), settings
    self.rules, self.num_states = rules, self.seats.num_states
    self.group = group_size(settings, self.seats)
    self.need, self.newton = plan_memory(self.seats, settings, self.group)
    logging.info("%d players, rules %s: %s keys, %s model states; memory "
                 "estimate %.2f GB; backend %s, %d device(s)", rules.players,
                 rules.name, f"{self.seats.num_keys:,}",
                 f"{self.num_states:,}", self.need / 2**30,
                 jax.default_backend(), jax.device_count())

  def build(self) -> int:
    self.mesh = placement.make_mesh()
    tables, self.plan = multiplayer.build(
        self.seats, self.group, self.settings.norm == "relative", self.mesh,
        self.newton)
    self.tables = jax.tree.map(
        placement.place, tables,
        multiplayer.table_shardings(tables, self.mesh))
    self.exits = (seat_newton.empty(self.tables, self.plan)
                  if self.plan.newton else None)
    self.roll = bellman.roll_arrays(roll_tables.build(self.rules))
    self.done = np.concatenate([[0], np.cumsum(
        placement.local_copy(self.tables.work))])
    self.rate = None   # seconds per sweep's worth of states, once measured
    return self.need

  def fingerprint(self) -> dict[str, Any]:
    return fingerprint(self.rules, self.seats.key_shape, "seats-w0",
                       "float64", None)

  def fresh(self) -> SeatSweep:
    w0 = placement.place(multiplayer.initial_values(self.seats),
                         placement.everywhere(self.mesh))
    return SeatSweep(w0, 0, 0.0, 0, 0.0, 0.0, 0, 0.0)

  def restore(self, ckpt: checkpointing.Checkpoints) -> Progress | None:
    seats = self.seats
    like = {"w0": jax.ShapeDtypeStruct(multiplayer.values_shape(seats),
                                       jnp.float64)}
    got = ckpt.restore(like, check=lambda saved: integrity.check_probabilities(
        saved["w0"], "checkpoint w0"))
    if got is None:
      return None
    step, saved, meta = got
    where = dict(meta["position"])
    where.setdefault("work", 0.0)   # checkpoints written before the count
    pos = Position(**{k: where[k] for k in Position._fields})
    logging.info("resumed from checkpoint %d: sweep %d, stage %d", step,
                 pos.sweep + 1, pos.stage)
    w0 = placement.place(saved["w0"], placement.everywhere(self.mesh))
    return Progress(
        SeatSweep(w0, pos.stage, pos.change, 0, 0.0, 0.0, pos.unsettled,
                  pos.apart),
        pos.sweep, pos.history[-1] if pos.history else math.inf,
        list(pos.history), list(meta.get("trace", [])), pos.seconds,
        pos.work, pos.passes, step)

  def chunk_sweeps(self, settings: Settings, iteration: int) -> int:
    return 1   # a sweep saves its own position within

  def advance(self, p: Progress, sweeps: int,
              ckpt: checkpointing.Checkpoints) -> Chunk:
    """The rest of the current sweep, stage by stage."""
    del sweeps
    x, S, t0 = p.state, len(self.tables.work), time.time()
    saved = logged = t0
    if not x.stage:
      x = x._replace(unsettled=0, apart=0.0)
    # Under a penalty a block's stages go together (`penalty_blocks`); a
    # checkpoint within one, from before, resumes at its block's start.
    per = 1 if self.plan.cycles else self.seats.stages_per_block
    whole = x.stage < per   # the exits of every block come from this call
    s = x.stage - x.stage % per
    while s < S:
      x = self._run(x, s, self._run_end(s, per), p.iteration == 0)
      s, now = x.stage, time.time()
      if now - logged > LOG_SECONDS:
        self._log(p, x, now - t0)
        logged = now
      if now - saved > SAVE_SECONDS and s < S:
        self._save(ckpt, p, x._replace(seconds=x.seconds + now - t0))
        saved = now
    logging.info("sweep %d: its stages in %.2f s%s", p.iteration + 1,
                 time.time() - t0, " (with the exits' forward passes)"
                 if self.exits is not None else "")
    # A sweep that converged is the result as it stands (the correction
    # would move it by less than its change).
    w0 = (self._correct(x.w0) if self.plan.newton and whole
          and not x.change < self.settings.tol else x.w0)
    done = SeatSweep(w0, 0, 0.0, 0, 0.0, 0.0, x.unsettled, x.apart)
    return Chunk(done, 1, x.change, [x.change], x.work, x.passes)

  def _correct(self, w0: jax.Array) -> jax.Array:
    """The sweep's output with its Newton step (`seat_newton`)."""
    t0 = time.time()
    # Exact to a quarter of the tolerance near the fixed point: in the
    # relative norm, of the smallest value's.
    floor = self.settings.tol / 4 * (w0[:-1].min() if self.plan.relative
                                     else 1.0)
    w0, passes, size = seat_newton.compiled_correct(
        w0, self.exits, self.tables, self.plan, floor)
    logging.info("Newton step: %d passes, largest correction %.3e, %.2f s",
                 int(passes), float(size), time.time() - t0)
    return w0

  def _run_end(self, s: int, per: int) -> int:
    """Where a run of steps from stage s ends: the whole rest of the sweep
    where its states pass within `CALL_SECONDS` at the rate measured so
    far, else as many steps as do (one before any is measured, or with
    `CALL_SECONDS` 0)."""
    S = len(self.tables.work)
    if self.rate is None or CALL_SECONDS <= 0:
      return min(S, s + per)
    left = self.done[S] - self.done[s]
    if left * self.rate <= CALL_SECONDS:
      return S
    fits = np.searchsorted(self.done, self.done[s] + CALL_SECONDS / self.rate,
                           side="right") - 1
    return min(S, max(s + per, fits - fits % per))

  def _run(self, x: SeatSweep, lo: int, hi: int, first: bool) -> SeatSweep:
    """x after stages lo .. hi - 1 (whole blocks under a penalty), in one
    call (`seat_sweep.compiled_steps`)."""
    per = 1 if self.plan.cycles else self.seats.stages_per_block
    t0 = time.time()
    r = seat_sweep.compiled_steps(
        x.w0, self.tables, np.int32(lo // per), np.int32(hi // per), first,
        self.roll, self.plan, self.exits)
    self.exits, change = r.exits, float(r.change)   # waits for the run
    share = self.done[hi] - self.done[lo]
    if share > 0:
      self.rate = (time.time() - t0) / share
    return x._replace(w0=r.w0, stage=hi, change=max(x.change, change),
                      passes=x.passes + int(r.passes),
                      work=x.work + float(r.work),
                      unsettled=x.unsettled + int(r.unsettled),
                      apart=max(x.apart, float(r.apart)))

  def _log(self, p: Progress, x: SeatSweep, seconds: float) -> None:
    start = self.done[p.state.stage]
    share = (self.done[x.stage] - start) / (1 - start)
    logging.info("sweep %d: %.0f%% of its states, max change so far %.3e, "
                 "sweep ETA %s", p.iteration + 1, 100 * self.done[x.stage],
                 x.change, clock(seconds * (1 - share) / share))

  def opening(self, state: SeatSweep) -> float:
    integrity.check_probabilities(placement.local_copy(state.w0)[:-1],
                                  "the start values")
    return float(self._seat_win(state.w0)[0])

  def _seat_win(self, w0) -> np.ndarray:
    seats = self.seats
    return multiplayer.start_values(w0, seats)[seats.opening()]

  def note(self, state: SeatSweep) -> str:
    return (f"; {state.unsettled} keys unsettled (last two policy steps "
            f"{state.apart:.1e} apart)" if state.unsettled else "")

  def save(self, ckpt: checkpointing.Checkpoints, p: Progress) -> None:
    self._save(ckpt, p, p.state)

  def _save(self, ckpt: checkpointing.Checkpoints, p: Progress,
            x: SeatSweep) -> None:
    pos = Position(p.iteration, x.stage, x.change, p.history,
                   p.steps + x.passes, p.work + x.work,
                   p.sweep_seconds + x.seconds, x.unsettled, x.apart)
    ckpt.save(p.iteration * len(self.tables.work) + x.stage, {"w0": x.w0},
              {"position": pos._asdict(), "trace": p.trace})

  def fields(self, p: Progress) -> dict[str, Any]:
    return {
        "players": self.seats.players,
        "seat_win": [float(x) for x in self._seat_win(p.state.w0)],
        "unsettled_keys": p.state.unsettled,
        "unsettled_apart": p.state.apart,
        "keys": self.seats.num_keys,
        "turn_passes": p.steps,
        "state_updates_per_second": (p.work * self.num_states
                                     / p.sweep_seconds
                                     if p.sweep_seconds else None),
    }

  def write(self, workdir: str, summary: dict[str, Any], p: Progress
            ) -> None:
    results.write_sealed(workdir, summary,
                         multiplayer.start_values(p.state.w0, self.seats))
    with open(os.path.join(workdir, "seats.txt"), "w") as f:
      f.write(seat_table(summary) + "\n")


def seat_table(summary: dict) -> str:
  """Each seat's win probability from the opening, as text."""
  lines = [f"{summary['players']} players, {summary['rules']['name']} rules "
           f"to {summary['rules']['goal']}: win probability by seat with "
           "optimal play"]
  lines += [f"  seat {i + 1}: {p:.9f}"
            for i, p in enumerate(summary["seat_win"])]
  return "\n".join(lines)
