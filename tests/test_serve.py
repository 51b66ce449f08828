"""The explorer's server: it binds to this machine only unless told, and
its command line fails in one line."""

import os
import socket
import subprocess
import sys
import time
import urllib.request

from conftest import COMMANDS, ROOT

ENV = dict(os.environ)


def _listening(port: int) -> set[str]:
  """Local addresses (hex, as in /proc/net/tcp) listening on `port`."""
  found = set()
  for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    if not os.path.exists(table):
      continue
    for line in open(table).read().splitlines()[1:]:
      local, state = line.split()[1], line.split()[3]
      address, hexport = local.split(":")
      if state == "0A" and int(hexport, 16) == port:   # 0A: LISTEN
        found.add(address)
  return found


def test_binds_to_localhost_by_default():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  proc = subprocess.Popen([sys.executable, "-m", "farkle_jax.apps.serve",
                           "--shipped", "default", "--port", str(port)],
                          cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
  try:
    assert f"http://127.0.0.1:{port}/" in proc.stdout.readline()
    for _ in range(300):
      try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/info", timeout=1)
        break
      except OSError:
        time.sleep(0.1)
    assert _listening(port) == {"0100007F"}   # 127.0.0.1, nothing else
  finally:
    proc.terminate()
    proc.wait(timeout=30)


def _serve(*args):
  """`python -m farkle_jax.apps.serve args`, forked from a worker
  (conftest.CommandLines); the server that starts runs in a process of
  its own."""
  return COMMANDS("farkle_jax.apps.serve", *args, timeout=120)


def test_bad_command_lines_fail_in_one_line():
  for args, code, words in ((("--port", "70000"), 2, "--port=70000"),
                            (("--port", "x"), 2, "--port"),
                            (("--shipped", "zilch"), 2, "--shipped"),
                            (("--workdir", "/nonexistent"), 1,
                             "does not exist")):
    out = _serve(*args)
    errors = [l for l in out.stderr.splitlines() if l.startswith("error: ")]
    assert out.returncode == code, out.stderr
    assert len(errors) == 1 and words in errors[0], out.stderr
    assert "Traceback" not in out.stderr
