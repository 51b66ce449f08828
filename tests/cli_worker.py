"""Runs one entry point's command lines, many in one process (for tests
that send hundreds of them: each `python -m` would cost a JAX start-up).

    python tests/cli_worker.py farkle_jax.apps.advise           # in-process
    python tests/cli_worker.py farkle_jax.main --fork           # a child each
    python tests/cli_worker.py experiments/benchmark.py --fork  # a script

Reads one JSON list of arguments a line (or {"args": [...], "cwd": DIR}
for a forked line run in DIR) and writes one JSON line:
{"code": exit code, "stdout": ..., "stderr": ...}.

In-process: the same flag parsing, `main` and error classification of
`command_line.run`, flags reset to their defaults in between; what a line
compiles stays for the next (fast for entry points without a config flag).

--fork: the worker imports JAX and the package once; each line runs in a
child forked from it exactly as `python -m MODULE ARGS` runs it (the
module as `__main__`, file descriptors 1 and 2 captured), so no flag or
config state passes from one line to the next. The fork is safe: the
worker has not started JAX's runtime (one thread).
"""

import contextlib
import importlib
import io
import json
import os
import runpy
import sys
import tempfile

from absl import flags

import farkle_jax  # noqa: F401  (float64 first)
from farkle_jax.apps import command_line


def _in_process(name: str, args: list) -> dict:
  flags.FLAGS.unparse_flags()
  out, err, code = io.StringIO(), io.StringIO(), 0
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
      rest = command_line._parse([name, *args])
      command_line.guarded(importlib.import_module(name).main)(rest)
    except SystemExit as e:
      code = command_line.exit_code(e)
  return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _forked(name: str, args: list, cwd: str | None = None) -> dict:
  with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    pid = os.fork()
    if pid == 0:   # the child: `python -m name args`, then exit
      code = 0
      try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # not the worker's
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        if cwd:
          os.chdir(cwd)
        sys.argv = [name, *args]
        if name.endswith(".py"):   # a script: python path/to/script.py
          sys.path.insert(0, os.path.dirname(os.path.abspath(name)))
          runpy.run_path(name, run_name="__main__")
        else:
          runpy.run_module(name, run_name="__main__", alter_sys=True)
      except SystemExit as e:
        code = command_line.exit_code(e)
      except BaseException:  # noqa: BLE001  (as the interpreter would)
        import traceback
        traceback.print_exc()
        code = 1
      sys.stdout.flush()
      sys.stderr.flush()
      os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    return {"code": code, "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace")}


def main() -> None:
  name, fork = sys.argv[1], "--fork" in sys.argv[2:]
  if fork:   # what every entry point imports, so that a child starts fast
    for heavy in ("jax.numpy", "numpy", "orbax.checkpoint", "ml_collections",
                  "farkle_jax.solver.driver",
                  "farkle_jax.strategy.solved_game"):
      importlib.import_module(heavy)
  else:
    importlib.import_module(name)
  for line in sys.stdin:
    args, cwd = json.loads(line), None
    if isinstance(args, dict):
      args, cwd = args["args"], args["cwd"]
    result = _forked(name, args, cwd) if fork else _in_process(name, args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
  main()
