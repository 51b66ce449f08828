"""The plan of an N-player solve over one or several GPUs, from the
program's own counts (docs/model.md §8, "Counting a sweep of N players").

    python experiments/seats_plan.py --config configs/facebook.py \
        --config.rules.players=3 --out experiments/results/seats_plan

Nothing is solved: for each device count and sub-batch size (the
`--config.solver.chunk_keys` a GPU run takes) it prints the keys, model
states, stages and sub-batches, the memory per device (the estimate the
solve's own memory check uses, `stage_engine.footprint`) and whether an
H100 (80 GB, 80 % of it for the run) holds it, the counts of one sweep
(`solver.seat_counts`: dependent loop steps, bytes gathered and written,
bytes each device receives from the others), and a *projection* of the
sweep time on H100s: bytes at the full HBM bandwidth of all devices, each
dependent step at 8 us, exchanges over NVLink at 450 GB/s a direction. It
is not a measurement. Then the command that would run the solve with
`jax.distributed`. Writes plan.md and plan.json under --out.
"""

from __future__ import annotations

import json
import os

from absl import app, flags
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
from farkle_jax.game.seats import SeatsLayout
from farkle_jax.solver import (seat_counts, seat_wave_schedule, stage_engine,
                               sweep_counts)

H100_BYTES = 80 * 10**9   # HBM3 of one H100 SXM (NVIDIA's datasheet)
NVLINK_BYTES_PER_S = 450e9   # NVLink 4, one direction (datasheet: 900 GB/s
                             # both directions together)


def plan_row(seats: SeatsLayout, group: int, devices: int, sweeps: int
             ) -> dict:
  """One device count and sub-batch size: sizes, memory, counts and the
  projection."""
  host, device = stage_engine.footprint(seats, group, devices)
  newton = stage_engine.footprint(seats, group, devices, newton=True)[1]
  sw = seat_counts.sweep(seats, group, devices)
  c = sw.counts
  moved = sweep_counts.projected_seconds(
      c, 1, bandwidth=devices * sweep_counts.H100_HBM_BYTES_PER_S)
  exchange = sw.exchanged_bytes / NVLINK_BYTES_PER_S
  return dict(
      devices=devices, group=sw.group, stages=sw.stages,
      sub_batches=sw.batches, device_gb=device / 1e9, host_gb=host / 1e9,
      fits_h100=device <= 0.8 * H100_BYTES,
      newton_gb=(newton - device) / 1e9,
      newton_fits=newton <= 0.8 * H100_BYTES,
      dependent_steps=c.dependent_steps, gathered_tb=c.gathered_bytes / 1e12,
      written_tb=c.written_bytes / 1e12,
      exchanged_gb=sw.exchanged_bytes / 1e9,
      sweep_s=moved + exchange, solve_min=sweeps * (moved + exchange) / 60)


def wave_row(seats: SeatsLayout, devices: int, sweeps: int) -> dict:
  """The N-player wavefront's schedule (`solver.seat_wave_schedule`: only
  its schedule and counts exist, not its sweep) on `devices` devices:
  memory, counts and the projection, as `plan_row` (exchanges left
  out)."""
  wave = seat_wave_schedule.plan(seats, devices)
  c = wave.counts
  sweep_s = sweep_counts.projected_seconds(
      c, 1, bandwidth=devices * sweep_counts.H100_HBM_BYTES_PER_S)
  return dict(devices=devices, span=wave.span, chunk=wave.chunk,
              device_gb=wave.device_bytes / 1e9,
              fits_h100=wave.device_bytes <= 0.8 * H100_BYTES,
              h100s_needed=_devices_for(wave),
              dependent_steps=c.dependent_steps,
              gathered_tb=c.gathered_bytes / 1e12,
              written_tb=c.written_bytes / 1e12, sweep_s=sweep_s,
              solve_min=sweeps * sweep_s / 60)


def _devices_for(wave: seat_wave_schedule.SeatWave) -> int | None:
  """H100s whose 80 % hold the wavefront: the rings split among them,
  the start vectors whole on each (None: the vectors alone do not fit)."""
  room = int(0.8 * H100_BYTES) - wave.vector_bytes
  return -(-wave.ring_bytes // room) if room > 0 else None


def _wave_table(rows: list[dict]) -> list[str]:
  lines = ["| H100s | wave steps | GB per device | fits | dependent steps "
           "| TB gathered | TB written | s per sweep (projected) | minutes "
           "(projected) |", "|" + "---|" * 9]
  for r in rows:
    lines.append(
        f"| {r['devices']} | {r['span']:,} | {r['device_gb']:,.1f} | "
        f"{'yes' if r['fits_h100'] else 'no'} | {r['dependent_steps']:,} "
        f"| {r['gathered_tb']:,.1f} | {r['written_tb']:,.1f} | "
        f"{r['sweep_s']:,.1f} | {r['solve_min']:,.1f} |")
  return lines


def _table(rows: list[dict]) -> list[str]:
  lines = ["| H100s | keys per sub-batch | sub-batches per stage | GB per "
           "device | fits | dependent steps | TB gathered | TB written | "
           "GB received per device | s per sweep (projected) | minutes "
           "(projected) |", "|" + "---|" * 11]
  for r in rows:
    lines.append(
        f"| {r['devices']} | {r['group']:,} | {r['sub_batches']:,} | "
        f"{r['device_gb']:.1f} | {'yes' if r['fits_h100'] else 'no'} | "
        f"{r['dependent_steps']:,} | {r['gathered_tb']:,.1f} | "
        f"{r['written_tb']:,.1f} | {r['exchanged_gb']:,.1f} | "
        f"{r['sweep_s']:,.1f} | {r['solve_min']:,.1f} |")
  return lines


def _newton_line(rows: list[dict]) -> str:
  """Whether the Newton step's exits fit, by row (`solver.newton` left
  at None takes the step only where they do; its sweep count is not
  projected)."""
  sizes = ", ".join(f"{r['devices']} x {r['group']:,}: "
                    f"{r['newton_gb']:,.1f} GB more, "
                    f"{'fits' if r['newton_fits'] else 'does not fit'}"
                    for r in rows)
  return ("The Newton step's exits per device (solver.newton=None takes "
          f"the step only where they fit): {sizes}.")


def command(config_args: list[str], processes: int) -> str:
  """The main job over `processes` hosts (one per host, each with its
  GPUs), as each host runs it."""
  return ("python -m farkle_jax.main " + " ".join(config_args)
          + " --workdir /shared/runs/seats --coordinator node0:12355 "
          f"--num_processes {processes} --process_id $I   # I = 0.."
          f"{processes - 1}, one per host")


def _counts(name: str) -> list[int]:
  """A list flag of positive integers, or a one-line usage error."""
  values = flags.FLAGS[name].value
  try:
    out = [int(x) for x in values]
  except ValueError:
    out = []
  if not out or min(out) < 1:
    raise app.UsageError(f"--{name}={','.join(values)}: expected positive "
                         "integers, e.g. 1,8")
  return out


def _config_args(group: int) -> list[str]:
  """The config file and overrides of this run, as the main job takes
  them, with `solver.chunk_keys` set to `group`."""
  holder = flags.FLAGS["config"]
  args = ["--config", config_flags.get_config_filename(holder)]
  for field, value in config_flags.get_override_values(holder).items():
    if field != "solver.chunk_keys":
      args.append(f"--config.{field}={value}")
  return args + [f"--config.solver.chunk_keys={group}"]


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  devices, groups = _counts("devices"), _counts("groups")
  seats, _ = stage_engine.check(_CONFIG.value)
  r = seats.rules
  rows = [plan_row(seats, g, d, _SWEEPS.value)
          for d in devices for g in groups]
  waves = [wave_row(seats, d, _SWEEPS.value) for d in devices]
  head = (f"{r.players} players, {r.name} rules to {r.goal:,} (floor "
          f"{r.floor:,}): {seats.num_keys:,} keys of {r.players} seat "
          f"values, {seats.num_states:,} model states per sweep, "
          f"{rows[0]['stages']} stages; host memory to build the tables "
          f"{rows[0]['host_gb']:.1f} GB per process")
  lines = ["# " + head, "", *_table(rows), "",
           f"Projected minutes: {_SWEEPS.value} sweeps (--sweeps), each at "
           "the full HBM bandwidth of every device, 8 us per dependent "
           "step and NVLink for the exchanges: a projection, not a "
           "measurement.", "", _newton_line(rows), "",
           "The wavefront for N players (its schedule and counts only: "
           "its sweep is not built; `solver.seat_wave_schedule`), per "
           "device count, exchanges left out; its rings hold the live "
           "keys' last turn rows, so it trades memory for steps "
           f"(H100s that would hold it: {waves[-1]['h100s_needed']}):",
           "", *_wave_table(waves), "",
           "Commands: one host and its GPUs (every "
           "visible device joins the mesh), then two hosts (each with its "
           "GPUs, the workdir on storage both see):", "",
           "    python -m farkle_jax.main "
           + " ".join(_config_args(groups[-1]))
           + " --workdir runs/seats", "",
           "    " + command(_config_args(groups[-1]), 2)]
  text = "\n".join(lines)
  print(text)
  os.makedirs(_OUT.value, exist_ok=True)
  with open(os.path.join(_OUT.value, "plan.md"), "w") as f:
    f.write(text + "\n")
  with open(os.path.join(_OUT.value, "plan.json"), "w") as f:
    json.dump(dict(rules=r.to_dict(), players=r.players,
                   keys=seats.num_keys, states=seats.num_states,
                   sweeps=_SWEEPS.value, rows=rows, wavefront=waves), f,
              indent=1)


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file(
      "config", "configs/facebook.py", "Config file of the solve planned.",
      lock_config=True)
  _DEVICES = flags.DEFINE_list("devices", ["1", "8"], "Device counts.")
  _GROUPS = flags.DEFINE_list("groups", ["2048", "16384"],
                              "Keys per sub-batch (solver.chunk_keys).")
  _SWEEPS = flags.DEFINE_integer("sweeps", 20, "Sweeps the projection "
                                 "assumes.", lower_bound=1)
  _OUT = flags.DEFINE_string("out", "experiments/results/seats_plan",
                             "Where plan.md and plan.json go.")
  command_line.run(main)
