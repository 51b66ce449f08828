"""Runs experiments/colab.ipynb end to end outside Jupyter's front end.

What a GPU machine without a notebook server needs to show the notebook
works there: every cell in a fresh kernel on CONFIG, twice (the second run
resumes from the first one's checkpoints, as after a runtime restart),
with the text each cell printed and the wall time of each run.

  python experiments/notebook_run.py --config configs/facebook.py \
      --workdir /tmp/nb

Needs nbclient, nbformat and ipykernel (not in the package's dependencies:
the notebook's own tests use them too).
"""

import argparse
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "experiments", "colab.ipynb")


def execute(config: str, workdir: str) -> tuple[str, int]:
  """Runs every cell in a fresh kernel on CONFIG (path[:argument]) with
  its checkpoints in WORKDIR; returns the text the cells printed and the
  number of figures they drew. Sets the notebook's environment variables
  in this process (the kernel inherits them)."""
  import nbformat  # pylint: disable=C0415
  from nbclient import NotebookClient  # pylint: disable=C0415
  os.environ["FARKLE_JAX_CONFIG"] = config
  os.environ["FARKLE_JAX_WORKDIR"] = workdir
  # The kernel finds the package in this tree without installing it.
  os.environ["PYTHONPATH"] = os.pathsep.join(
      p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
  nb = nbformat.read(NOTEBOOK, as_version=4)
  NotebookClient(nb, timeout=900, kernel_name="python3", resources={
      "metadata": {"path": os.path.join(ROOT, "experiments")}}).execute()
  text, images = [], 0
  for cell in nb.cells:
    for out in cell.get("outputs", []):
      text.append(out.get("text", ""))
      images += "image/png" in out.get("data", {})
  return "".join(text), images


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--config", default="configs/tiny.py:facebook")
  parser.add_argument("--workdir", required=True)
  parser.add_argument("--runs", type=int, default=2)
  args = parser.parse_args()
  # The command line first: a wrong flag is named wherever it runs.
  path = args.config.partition(":")[0]
  if not os.path.isfile(os.path.join(ROOT, path)):
    print(f"notebook_run: --config {args.config!r}: no file {path} in "
          f"{ROOT}", file=sys.stderr)
    return 2
  if args.runs < 1:
    print(f"notebook_run: --runs {args.runs}: at least 1", file=sys.stderr)
    return 2
  try:
    from nbclient.exceptions import CellExecutionError  # pylint: disable=C0415
  except ImportError:
    print("notebook_run: needs nbclient, nbformat and ipykernel "
          "(pip install nbclient nbformat ipykernel)", file=sys.stderr)
    return 2
  for run in range(1, args.runs + 1):
    print(f"== run {run}: every cell in a fresh kernel ...", flush=True)
    start = time.perf_counter()
    try:
      text, images = execute(args.config, args.workdir)
    except CellExecutionError as e:
      last = re.sub(r"\x1b\[[0-9;]*m", "", str(e).strip().splitlines()[-1])
      print(f"notebook_run: a cell failed: {last}", file=sys.stderr)
      return 1
    wall = time.perf_counter() - start
    print(f"== run {run}: {wall:.1f} s, {images} figure(s)")
    print(text.rstrip())
  return 0


if __name__ == "__main__":
  sys.exit(main())
