"""What the solve driver asks of a way of sweeping (docs/model.md §8).

The driver (`driver.run`) is one pipeline for any number of players; an
`Engine` is what differs: two players sweep with the compiled chunks of
`methods` (`chunk_engine`), three or more with the stage sweeps of
`multiplayer` (`stage_engine`). This module holds the types both sides
share, so neither engine imports the driver.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from farkle_jax.game.rules import Rules
from farkle_jax.solver import checkpointing
from farkle_jax.solver.configuration import Settings


class Progress(NamedTuple):
  """Where a solve stands: the engine's state and the counts so far."""
  state: Any                 # the engine's (a method State, a seat sweep)
  iteration: int             # sweeps done
  residual: float            # max change of the last sweep (inf: none yet)
  history: list[float]       # max change of every sweep
  trace: list[dict]          # per chunk: iteration, residual, work, W(start)
  sweep_seconds: float       # time spent in sweeps, all processes
  work: float                # states evaluated, in sweeps of all states
  steps: int                 # dependent steps (turn passes for N players)
  resumed_from: int | None   # checkpoint step this process started from


class Chunk(NamedTuple):
  """What one chunk of sweeps did (the counts are this chunk's own)."""
  state: Any
  done: int                  # sweeps finished
  residual: float            # max change of the last one
  history: list[float]       # max change of each
  work: float                # states evaluated, in sweeps of all states
  steps: int                 # dependent steps


class Engine(Protocol):
  """How a number of players is swept, behind the one pipeline."""
  rules: Rules
  method: str                # as the log and the summary name it
  num_states: int            # model states
  retired: tuple[str, ...]   # fingerprint fields older checkpoints may hold

  def build(self) -> int:
    """Tables and compilation (under the lock); the memory estimate."""
  def fingerprint(self) -> dict[str, Any]: ...
  def fresh(self) -> Any:
    """The state before any sweep."""
  def restore(self, ckpt: checkpointing.Checkpoints) -> Progress | None: ...
  def chunk_sweeps(self, settings: Settings, iteration: int) -> int: ...
  def advance(self, p: Progress, sweeps: int,
              ckpt: checkpointing.Checkpoints) -> Chunk: ...
  def opening(self, state: Any) -> float:
    """The first player's win probability at the opening; Damaged if the
    values are not probabilities."""
  def note(self, state: Any) -> str: ...
  def save(self, ckpt: checkpointing.Checkpoints, p: Progress) -> None: ...
  def fields(self, p: Progress) -> dict[str, Any]: ...
  def write(self, workdir: str, summary: dict[str, Any], p: Progress
            ) -> None: ...


def fingerprint(rules: Rules, key_shape: tuple[int, ...], state_format: str,
                dtype: str, method: str | None) -> dict[str, Any]:
  """What a checkpoint must match to be resumed by a run. Not the batch
  sizes: the values do not depend on them, so a run started on a CPU
  resumes on a GPU."""
  out = {"rules": rules.to_dict(), "key_shape": list(key_shape),
         "state_format": state_format, "dtype": dtype}
  if method is not None:
    out["method"] = method
  return out


def clock(seconds: float) -> str:
  """h:mm:ss."""
  seconds = int(seconds)
  return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
