"""Several processes, one solve: `jax.distributed` for the command line.

    python -m farkle_jax.main --config C --workdir W \
        --coordinator HOST:PORT --num_processes P --process_id I

on each of P hosts (I = 0..P-1, the same HOST:PORT of process 0 everywhere;
`--coordinator=auto` lets JAX find them under Slurm or Open MPI). The solve
then runs over the devices of all processes; process 0 writes the summary,
tables and log lines, and all write their parts of the Orbax checkpoints into
the one workdir, which must be a directory every host sees.
"""

from __future__ import annotations

import jax


class ClusterError(ValueError):
  """The flags describe no cluster a process can join."""


def start(coordinator: str | None, num_processes: int | None,
          process_id: int | None) -> bool:
  """Joins this process to the others of the solve, before any JAX
  computation; returns whether it did (no flag: a single process).

  Raises:
    ClusterError: an incomplete or inconsistent set of flags.
  """
  given = (coordinator, num_processes, process_id)
  if all(x is None for x in given):
    return False
  if coordinator == "auto" and num_processes is None and process_id is None:
    _collectives()
    jax.distributed.initialize()
    return True
  if any(x is None for x in given):
    raise ClusterError("--coordinator, --num_processes and --process_id go "
                       "together (or --coordinator=auto alone, under Slurm "
                       "or Open MPI)")
  host, _, port = coordinator.rpartition(":")
  if not host or not port.isdigit():
    raise ClusterError(f"--coordinator={coordinator}: expected HOST:PORT of "
                       "process 0, e.g. node0:12355")
  if not 0 <= process_id < num_processes:
    raise ClusterError(f"--process_id={process_id}: expected 0.."
                       f"{num_processes - 1} for --num_processes="
                       f"{num_processes}")
  _collectives()
  jax.distributed.initialize(coordinator, num_processes, process_id)
  return True


def _collectives() -> None:
  # CPU devices of different processes exchange data through Gloo; GPUs
  # and TPUs use their own interconnect whatever this says.
  jax.config.update("jax_cpu_collectives_implementation", "gloo")
