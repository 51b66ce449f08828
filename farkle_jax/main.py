"""Solves a Farkle rule set: every position's win probability and the
optimal play, written to the workdir (a rerun of the same command resumes
from its latest checkpoint).

    farkle solve --config default --workdir runs/default      # seconds
    farkle solve --config facebook --workdir runs/facebook    # minutes
    farkle solve --config path/to/my_rules.py --workdir runs/mine
    farkle solve --config default --config.rules.goal=2000 --workdir runs/g2000
    python -m farkle_jax.main --config configs/default.py --workdir runs/default

--config takes a shipped config's name (`farkle --help` lists them) or a
config file; any of its fields can be set on the command line
(`--config.solver.tol=1e-10`, `--config.rules.players=3`). It prints the
first player's win probability and the opening turn's table; the log
records go to workdir/log.txt (and to the terminal with -v). How long
each shipped config takes: the README's table "How long things take".
"""

import logging as py_logging
import os

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (enables float64 before any array)
from farkle_jax.apps import cluster, command_line, progress
from farkle_jax.game import dice
from farkle_jax.solver import checkpointing, configuration, driver
from farkle_jax.solver import stage_engine
from farkle_jax.solver import placement, results

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "A shipped config's name (default, facebook, ...; "
    "`farkle --help` lists them) or a config file, e.g. configs/default.py.",
    lock_config=True)
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
    "progress", "auto", ["auto", "bar", "lines", "log"],
    "How the solve shows its progress (sweep, max change, ETA): a bar "
    "(bar), a plain line every 10 s (lines), log records only (log: in "
    "workdir/log.txt, and on the terminal with -v), or a bar on a terminal "
    "and lines otherwise (auto).")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    cluster.start(_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
  except cluster.ClusterError as e:
    raise app.UsageError(str(e)) from None
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  if placement.is_writer():  # process 0 speaks for a multi-process solve
    py_logging.getLogger().addHandler(WorkdirLog(_WORKDIR.value))
  else:
    logging.set_verbosity(logging.WARNING)
  with progress.for_solve(_PROGRESS.value, flags.FLAGS.verbose,
                          show=placement.is_writer()) as display:
    summary = driver.run(_CONFIG.value, _WORKDIR.value, on_chunk=display)
  if not placement.is_writer():
    return
  if "seat_win" in summary:   # three or more players
    print(stage_engine.seat_table(summary))
    print(_convergence(summary))
    return
  print(f"first-player win probability: {summary['first_player_win']:.6f} "
        f"({_convergence(summary)})")
  rules, settings = configuration.check(_CONFIG.value)
  if rules.hands:
    print(_match_up(rules, _WORKDIR.value))
  for b, d, f, e in settings.slices:
    with open(results.table_name(_WORKDIR.value, b, d, f, e) + ".txt") as fh:
      print(fh.read())
  print(f"results in {_WORKDIR.value} (the log: "
        f"{os.path.join(_WORKDIR.value, WorkdirLog.NAME)})")


class WorkdirLog(py_logging.FileHandler):
  """The run's log records, every level from INFO, in workdir/log.txt
  (appended to by each rerun). Records that come before the solve has
  checked and made the workdir are held till it exists: a refused run
  leaves nothing behind."""

  NAME = "log.txt"
  HELD = 1000   # at most this many records wait for the workdir

  def __init__(self, workdir: str):
    super().__init__(os.path.join(workdir, self.NAME), delay=True)
    self.setLevel(py_logging.INFO)
    self.setFormatter(logging.PythonFormatter())
    self.addFilter(checkpointing.QuietOrbax())
    self._held: list[py_logging.LogRecord] = []

  def emit(self, record):
    if self.stream is None and not os.path.isdir(
        os.path.dirname(self.baseFilename)):
      if len(self._held) < self.HELD:
        self._held.append(record)
      return
    held, self._held = self._held, []
    for early in held:
      super().emit(early)
    super().emit(record)

  def handleError(self, record):
    """A log that cannot be written (a full disk) is not the run's
    failure: the record is dropped, without the traceback `logging` would
    print; the run reports its own errors."""


def _match_up(rules, workdir: str) -> str:
  """Under rules.hands: whose hands the headline's game opposes, and how
  to see the other match-ups."""
  lines = ["the match-up: player 1 with hand 1 moves first against player 2 "
           "with hand 2"]
  lines += [f"  hand {h}: {dice.legend(spec)}"
            for h, spec in enumerate(rules.hand_specs, start=1)]
  lines.append(f"  every match-up: farkle table --workdir {workdir} "
               "--hands MOVER,OPPONENT (e.g. --hands 2,1)")
  return "\n".join(lines)


def _convergence(summary) -> str:
  text = (f"{'converged' if summary['converged'] else 'NOT converged'}: "
          f"{summary['iterations']} sweeps, {summary['norm']} max change "
          f"{summary['final_residual']:.2e}")
  if summary.get("unsettled_keys"):
    text += (f"; {summary['unsettled_keys']} keys without an equilibrium "
             f"in pure policies, kept at the midpoint of policies "
             f"{summary['unsettled_apart']:.1e} apart")
  return text


def cli() -> None:
  """The command (`farkle solve`)."""
  command_line.run(main, required=("config", "workdir"))


if __name__ == "__main__":
  cli()
