"""Solves a Farkle rule set: `python -m farkle_jax.main --config C --workdir W`.

Rerunning the same command resumes from the workdir's latest checkpoint.
Config fields can be overridden on the command line, e.g.
`--config.solver.tol=1e-10` or `--config.rules.floor=-3000`.
"""

import sys

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (enables float64 before any array)
from farkle_jax.apps import cluster, command_line, progress
from farkle_jax.solver import checkpointing, driver, stage_engine
from farkle_jax.solver import placement, results

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "Config file, e.g. configs/default.py.", lock_config=True)
_WORKDIR = flags.DEFINE_string(
    "workdir", None, "Directory for checkpoints and results (resumed if it "
    "holds a checkpoint of the same model).")
_COORDINATOR = flags.DEFINE_string(
    "coordinator", None, "HOST:PORT of process 0 of a solve over several "
    "processes (auto: found by JAX under Slurm or Open MPI).")
_NUM_PROCESSES = flags.DEFINE_integer(
    "num_processes", None, "Processes of the solve.", lower_bound=1)
_PROCESS_ID = flags.DEFINE_integer(
    "process_id", None, "This process, 0..num_processes - 1.", lower_bound=0)
_PROGRESS = flags.DEFINE_enum(
    "progress", "auto", ["auto", "bar", "log"],
    "A progress bar with the ETA (bar), log lines only (log), or a bar when "
    "the output is a terminal (auto).")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    cluster.start(_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
  except cluster.ClusterError as e:
    raise app.UsageError(str(e)) from None
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  if not placement.is_writer():  # process 0 speaks for a multi-process solve
    logging.set_verbosity(logging.WARNING)
  show = placement.is_writer() and (_PROGRESS.value == "bar" or (
      _PROGRESS.value == "auto" and sys.stderr.isatty()))
  bar = progress.ResidualBar() if show else None
  try:
    summary = driver.run(_CONFIG.value, _WORKDIR.value, on_chunk=bar)
  finally:
    if bar is not None:
      bar.close()
  if not placement.is_writer():
    return
  if "seat_win" in summary:   # three or more players
    print(stage_engine.seat_table(summary))
    print(_convergence(summary))
    return
  print(f"first-player win probability: {summary['first_player_win']:.6f} "
        f"({_convergence(summary)})")
  for sl in _CONFIG.value.slices:
    b, d, f, e = sl
    with open(results.table_name(_WORKDIR.value, b, d, f, e) + ".txt") as fh:
      print(fh.read())
  logging.info("results in %s", _WORKDIR.value)


def _convergence(summary) -> str:
  text = (f"{'converged' if summary['converged'] else 'NOT converged'}: "
          f"{summary['iterations']} sweeps, {summary['norm']} max change "
          f"{summary['final_residual']:.2e}")
  if summary.get("unsettled_keys"):
    text += (f"; {summary['unsettled_keys']} keys without an equilibrium "
             f"in pure policies, kept at the midpoint of policies "
             f"{summary['unsettled_apart']:.1e} apart")
  return text


if __name__ == "__main__":
  command_line.run(main, required=("config", "workdir"))
