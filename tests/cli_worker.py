"""Runs one entry point's command lines, many in one process (for tests
that send hundreds of them: each `python -m` would cost a JAX start-up).

    python tests/cli_worker.py farkle_jax.apps.advise

Reads one JSON list of arguments a line; runs them as `python -m MODULE
ARGS` would (the same flag parsing, `main` and error classification of
`command_line.run`, flags reset to their defaults in between) and writes one
JSON line: {"code": exit code, "stdout": ..., "stderr": ...}.
"""

import contextlib
import importlib
import io
import json
import sys

from absl import flags

import farkle_jax  # noqa: F401  (float64 first)
from farkle_jax.apps import command_line


def main() -> None:
  name = sys.argv[1]
  module = importlib.import_module(name)
  for line in sys.stdin:
    flags.FLAGS.unparse_flags()
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
      try:
        rest = command_line._parse([name, *json.loads(line)])
        command_line.guarded(module.main)(rest)
      except SystemExit as e:
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    print(json.dumps({"code": code, "stdout": out.getvalue(),
                      "stderr": err.getvalue()}), flush=True)


if __name__ == "__main__":
  main()
