"""Output helpers of the experiment scripts: figures, CSV files, reports."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any, Iterable


def pyplot():
  """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  return plt


def save(fig, path: str) -> None:
  """Writes a figure and releases it."""
  fig.tight_layout()
  fig.savefig(path)
  pyplot().close(fig)


def write_csv(path: str, header: str, rows: Iterable[str]) -> None:
  """Writes a CSV file: the header line, then one line per row."""
  with open(path, "w") as f:
    f.write(header + "\n" + "".join(r + "\n" for r in rows))


def write_json(path: str, data: Any) -> None:
  """Writes data as indented JSON (values JSON lacks as their str)."""
  with open(path, "w") as f:
    json.dump(data, f, indent=1, default=str)


def write_report(path: str, lines: list[str], show: int | None = None
                 ) -> None:
  """Writes a markdown report and prints its first `show` lines (all)."""
  with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
  print("\n".join(lines[:show]))


def config_arg() -> str:
  """The --config value this script was started with (for its report)."""
  for i, a in enumerate(sys.argv):
    if a == "--config" and i + 1 < len(sys.argv):
      return sys.argv[i + 1]
    if a.startswith("--config="):
      return a.split("=", 1)[1]
  return "?"


def command_line(seconds: float | None = None, note: str = "") -> str:
  """The command this script was started with (and its runtime), as a
  markdown line for its report."""
  command = f"`python {shlex.join(sys.argv)}`"
  if seconds is None:
    return command
  extra = f", {note}" if note else ""
  return f"{command} ({seconds:.0f} s in this process{extra})"
