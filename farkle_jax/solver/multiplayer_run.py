"""The solve of N players: `run(config, workdir)` (docs/model.md §8).

The pipeline of the two-player driver for the ordered sweep of
`multiplayer`: check the config, estimate the memory and refuse what cannot
fit, lock the workdir, resume from its latest checkpoint (also from within a
sweep: a long sweep saves its position every few minutes), sweep until the
largest change is below the tolerance with progress lines and an ETA, and
write the results: workdir/summary.json, workdir/start_values.npy
([B] * N + [F] * N + [N]: every key's win probabilities by seat from the
player to move) and workdir/seats.txt.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from absl import logging

from farkle_jax.game import roll_tables
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import bellman, checkpointing, configuration
from farkle_jax.solver import integrity, locking, memory, multiplayer
from farkle_jax.solver import placement, results
from farkle_jax.solver.configuration import ConfigError, Settings
from farkle_jax.solver.driver import NotConverged

SAVE_SECONDS = 300   # a checkpoint within a sweep at least this often
LOG_SECONDS = 30     # a progress line at least this often
CPU_GROUP = 512      # keys per sub-batch on a CPU (cache-sized turns)


class Position(NamedTuple):
  """Where a solve stands (what a checkpoint holds besides w0)."""
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


def group_size(settings: Settings) -> int:
  """Keys per sub-batch: `solver.chunk_keys`, at most `CPU_GROUP` on a
  CPU."""
  if jax.default_backend() == "cpu":
    return min(settings.chunk_keys, CPU_GROUP)
  return settings.chunk_keys


def check(config: ml_collections.ConfigDict) -> tuple[SeatsLayout, Settings]:
  """Validates a config for N players (before any compute)."""
  rules, settings = configuration.check(config)
  if settings.method not in ("auto", "ordered"):
    raise ConfigError(
        f"config.solver.method = {settings.method!r} is not allowed: 'auto' "
        f"or 'ordered' with rules.players = {rules.players}")
  if settings.dtype != "float64":
    raise ConfigError(f"config.solver.dtype = {settings.dtype!r} is not "
                      "allowed: 'float64' with more than two players")
  return SeatsLayout(rules), settings


def footprint(seats: SeatsLayout, group: int) -> tuple[int, int]:
  """Estimated peak (host, device) bytes of a solve."""
  host, values = _key_bytes(seats)
  if max(host, values) > _BEYOND:   # no machine: skip the stage sizes
    return host + memory.RUNTIME_BYTES, values + memory.RUNTIME_BYTES
  S, U, G = multiplayer.plan_sizes(seats, group, jax.device_count())
  n = seats.players
  tables = S * U * G * (7 * 4 + 1)
  turns = (seats.num_rows + 1) * 6 * (n + 1) * G * 8 * 3
  stage = U * G * (n + 1) * 8 * 12
  device = values + tables + turns + stage + memory.RUNTIME_BYTES
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


def _need(seats: SeatsLayout, group: int) -> int:
  host, device = footprint(seats, group)
  return max(host, device) if jax.default_backend() == "cpu" else device


def plan_memory(seats: SeatsLayout, settings: Settings, group: int) -> int:
  """Refuses (MemoryRefused) a solve that cannot fit; returns the bytes.
  Every setting a refusal offers is checked to fit by the same estimate."""
  need = _need(seats, group)
  have = memory.available_bytes(on_device=True)
  if settings.memory_limit_gb is not None:
    have = (int(settings.memory_limit_gb * 2**30), "memory_limit_gb")
  if need <= 0.8 * have[0]:
    return need
  fits = lambda rules: _need(SeatsLayout(rules), group) <= 0.8 * have[0]
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
  return memory.check(need, f"{seats.players} players, "
                      f"{seats.num_keys:,} keys", have, hints, share=0.8)


def fingerprint(seats: SeatsLayout) -> dict[str, Any]:
  """What a checkpoint must match to resume. Not the sub-batch size: the
  values and the stage order do not depend on it, so a run started on a
  CPU resumes on a GPU."""
  return {"rules": seats.rules.to_dict(), "key_shape": list(seats.key_shape),
          "state_format": "seats-w0", "dtype": "float64"}


def run(config: ml_collections.ConfigDict, workdir: str) -> dict[str, Any]:
  """Solves the configured N-player rules in `workdir` (resuming).

  Returns:
    The summary, also written to workdir/summary.json.

  Raises:
    ConfigError, MemoryRefused: before anything is built or written.
    WorkdirLocked, CheckpointMismatch: as for two players.
    NotConverged: max_iterations reached above the tolerance (the results
      are written, marked not converged).
  """
  start = time.time()
  seats, settings = check(config)
  configuration.check_workdir(workdir)
  group = group_size(settings)
  need = plan_memory(seats, settings, group)
  logging.info("%d players, rules %s: %s keys, %s model states; memory "
               "estimate %.2f GB; backend %s, %d device(s)", seats.players,
               seats.rules.name, f"{seats.num_keys:,}",
               f"{seats.num_states:,}", need / 2**30, jax.default_backend(),
               jax.device_count())
  os.makedirs(workdir, exist_ok=True)
  with locking.WorkdirLock(workdir):
    results.remove_stale_temporaries(workdir)
    mesh = placement.make_mesh()
    tables, plan = multiplayer.build(seats, group, settings.norm == "relative",
                                     mesh)
    tables = placement.place(tables, placement.everywhere(mesh))
    roll = bellman.roll_arrays(roll_tables.build(seats.rules))
    ckpt = checkpointing.Checkpoints(os.path.join(workdir, "checkpoints"),
                                     fingerprint(seats),
                                     keep=settings.checkpoint_keep,
                                     retired=("group",))
    try:
      w0, pos = _restore(ckpt, seats)
      w0 = placement.place(w0, placement.everywhere(mesh))
      w0, pos = _sweeps(w0, pos, tables, plan, roll, settings, ckpt)
    finally:
      ckpt.close()
    summary = _summary(seats, settings, pos, w0, need, start, config)
    _write(workdir, summary, multiplayer.start_values(w0, seats), seats)
  if not summary["converged"]:
    raise NotConverged(
        f"not converged: {pos.sweep} sweeps (solver.max_iterations) left a "
        f"max change of {summary['final_residual']:.3e} >= solver.tol = "
        f"{settings.tol:g}; the values in {workdir} are marked unconverged. "
        "Rerun with a higher --config.solver.max_iterations to continue")
  return summary


def _restore(ckpt: checkpointing.Checkpoints, seats: SeatsLayout
             ) -> tuple[jax.Array, Position]:
  like = {"w0": jax.ShapeDtypeStruct((seats.num_keys + 1, seats.players),
                                     jnp.float64)}
  got = ckpt.restore(like, check=lambda saved: integrity.check_probabilities(
      saved["w0"], "checkpoint w0"))
  if got is None:
    return multiplayer.initial_values(seats), Position(
        0, 0, 0.0, [], 0, 0.0, 0.0, 0, 0.0)
  step, saved, meta = got
  where = dict(meta["position"])
  where.setdefault("work", 0.0)   # checkpoints written before the count
  pos = Position(**{k: where[k] for k in Position._fields})
  logging.info("resumed from checkpoint %d: sweep %d, stage %d", step,
               pos.sweep + 1, pos.stage)
  return saved["w0"], pos


def _save(ckpt: checkpointing.Checkpoints, w0: jax.Array, pos: Position,
          stages: int) -> None:
  ckpt.save(pos.sweep * stages + pos.stage, {"w0": w0},
            {"position": pos._asdict()})


def _sweeps(w0, pos: Position, tables, plan, roll, settings: Settings,
            ckpt) -> tuple[jax.Array, Position]:
  """Sweeps until the largest change of a sweep is below the tolerance."""
  S = tables.keys.shape[0]
  done = np.concatenate([[0], np.cumsum(tables.work)])
  while pos.sweep < settings.max_iterations and not (
      pos.history and pos.history[-1] < settings.tol):
    t0, saved, logged = time.time(), time.time(), time.time()
    change, passes, work = pos.change, pos.passes, pos.work
    unsettled, apart = (pos.unsettled, pos.apart) if pos.stage else (0, 0.0)
    for s in range(pos.stage, S):
      w0, ch, steps, n_open, gap = multiplayer.compiled_stage_step(
          w0, tables, jnp.int32(s), pos.sweep == 0, roll, plan)
      change, passes = max(change, float(ch)), passes + int(steps)
      work += int(steps) * float(tables.work[s])
      unsettled, apart = unsettled + int(n_open), max(apart, float(gap))
      now = time.time()
      if now - logged > LOG_SECONDS:
        share = (done[s + 1] - done[pos.stage]) / (1 - done[pos.stage])
        logging.info("sweep %d: %.0f%% of its states, max change so far "
                     "%.3e, sweep ETA %s", pos.sweep + 1, 100 * done[s + 1],
                     change, _clock((now - t0) * (1 - share) / share))
        logged = now
      if now - saved > SAVE_SECONDS and s + 1 < S:
        _save(ckpt, w0, pos._replace(
            stage=s + 1, change=change, passes=passes, work=work,
            seconds=pos.seconds + now - t0, unsettled=unsettled,
            apart=apart), S)
        saved = now
    integrity.check_probabilities(np.asarray(w0[:-1]), "the start values")
    pos = Position(pos.sweep + 1, 0, 0.0, pos.history + [change], passes,
                   work, pos.seconds + time.time() - t0, unsettled, apart)
    logging.info("sweep %d: max %s change %.3e in %.1f s%s", pos.sweep,
                 settings.norm, change, time.time() - t0,
                 f"; {unsettled} keys unsettled (last two policy steps "
                 f"{apart:.1e} apart)" if unsettled else "")
    if (pos.sweep % settings.checkpoint_every == 0 or change < settings.tol
        or pos.sweep >= settings.max_iterations):  # a rerun goes on from here
      _save(ckpt, w0, pos, S)
  return w0, pos


def _clock(seconds: float) -> str:
  seconds = int(seconds)
  return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _summary(seats: SeatsLayout, settings: Settings, pos: Position, w0,
             need: int, start: float, config) -> dict[str, Any]:
  opening = multiplayer.start_values(w0, seats)[
      (seats.index_of(0),) * seats.players + (0,) * seats.players]
  return {
      "players": seats.players,
      "seat_win": [float(x) for x in opening],
      "converged": bool(pos.history and pos.history[-1] < settings.tol),
      "iterations": pos.sweep,
      "final_residual": pos.history[-1] if pos.history else None,
      "norm": settings.norm, "tol": settings.tol,
      "residual_history": pos.history,
      "unsettled_keys": pos.unsettled,
      "unsettled_apart": pos.apart,
      "model_states": seats.num_states, "keys": seats.num_keys,
      "turn_passes": pos.passes,
      "state_updates": int(pos.work * seats.num_states),
      "state_updates_per_second": (pos.work * seats.num_states / pos.seconds
                                   if pos.seconds else None),
      "sweep_seconds": pos.seconds,
      "wall_seconds_this_process": time.time() - start,
      "memory_estimate_bytes": need,
      "peak_host_rss_bytes": resource.getrusage(
          resource.RUSAGE_SELF).ru_maxrss * 1024,
      "device": f"{jax.default_backend()}: {jax.devices()[0].device_kind}",
      "dtype": "float64",
      "rules": seats.rules.to_dict(),
      "config": config.to_dict(),
  }


def _write(workdir: str, summary: dict, w0: np.ndarray,
           seats: SeatsLayout) -> None:
  results.write_sealed(workdir, summary, w0)
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
