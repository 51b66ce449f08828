"""The advisor's command line: the published worked example, a decision
alone, JSON, illegal input refused in one line, and the interactive
session (piped, and at a terminal with readline's history)."""

import json
import os
import subprocess
import sys

import pexpect
import pytest

from conftest import COMMANDS, ROOT

# pexpect forks this (JAX-threaded) process only to exec the advisor at
# once, so the fork cannot deadlock on JAX's threads.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")


def _advise(*args):
  """`python -m farkle_jax.apps.advise args`, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS("farkle_jax.apps.advise", *args)


def test_worked_example_from_the_shipped_values():
  out = _advise("--b", "0", "--d", "0", "--roll", "6,5,3,3,3,2")
  assert out.returncode == 0, out.stderr
  lines = out.stdout.splitlines()
  rows = [l.split() for l in lines[2:5]]
  assert lines[1].split()[-2:] == ["probability", "bust"]
  assert rows[0][:1] == ["5"] and rows[0][-3:] == ["0.511005", "0.3284",
                                                   "best"]
  assert rows[1][:4] == ["5", "3", "3", "3"] and rows[1][-2:] == [
      "0.509711", "0.0000"]     # t=350 with 2 dice: banking is best
  assert rows[2][:3] == ["3", "3", "3"] and rows[2][-2] == "0.506680"
  assert "roll (win probability 0.511005, bust 0.3284)" in lines[5]
  assert "not allowed below 300" in lines[5]


def test_decision_alone_and_json():
  out = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "2", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["best"] == "bank" and got["bank"] > got["roll"]
  assert 1 / 3 < got["bust"] < 1    # rolling 2 dice on: 4/9 at once
  text = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "2").stdout
  assert (f"bank {got['bank']:.6f}, roll {got['roll']:.6f}, bust "
          f"{got['bust']:.4f})") in text


def test_json_advice_from_a_workdir(tiny_runs):
  workdir = tiny_runs("facebook")[3]
  out = _advise("--workdir", workdir, "--b", "0", "--d", "0", "--roll",
                "1,1,1,5,2,2", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["choices"][0]["wins_now"]      # 1050 >= goal 1000
  assert got["choices"][0]["bust"] == 0.0
  assert all(0 <= c["bust"] <= 1 for c in got["choices"])
  assert got["decision"]["best"] == "bank"


@pytest.mark.parametrize("args, words", [
    (("--n", "6", "--roll", "6,5,3"), "3 dice, but n=6 dice are to roll"),
    (("--roll", "6,5,3"), "t=0 with n=3 dice to roll cannot be reached"),
    (("--roll", "6,5,3,3,3,7"), "faces are 1..6"),
    (("--roll", "x"), "expected the faces of the dice"),
    (("--b", "12000"), "b=12000 is not a banked score"),
    (("--t", "50", "--n", "6"), "cannot be reached"),
    (("--f", "4"), "f=4 is not a farkle count"),
    (("--shipped", "zilch"), "--shipped"),
    (("--workdir", "/nonexistent/run"), "does not exist"),
])
def test_illegal_input_is_one_line(args, words):
  out = _advise(*args)
  errors = [l for l in out.stderr.splitlines() if l.startswith("error: ")]
  assert out.returncode in (1, 2) and len(errors) == 1, out.stderr
  assert words in errors[0] and "Traceback" not in out.stderr


def test_the_readme_commands_run_and_print_what_it_shows():
  """Every advise command of README.md that needs no solve of its own (nor
  a terminal) runs, and each `$ farkle advise` of a console block prints
  the lines shown after it, line for line."""
  readme = open(os.path.join(ROOT, "README.md")).read()
  lines = [line.lstrip("$ ").split("#")[0].strip()
           for line in readme.splitlines()
           if line.lstrip("$ ").startswith("farkle advise ")]
  commands = [line for line in lines if "--workdir" not in line
              and "--interactive" not in line and not line.endswith("\\")]
  assert len(commands) >= 2
  for line in commands:
    out = _advise(*line.split()[2:])
    assert out.returncode == 0, (line, out.stderr)
  for block in readme.split("```console\n")[1:]:
    for shown in block.split("\n```")[0].split("$ ")[1:]:
      command, _, output = shown.partition("\n")
      if command.startswith("farkle advise "):
        out = _advise(*command.split("#")[0].split()[2:])
        assert out.stdout.rstrip("\n") == output.rstrip("\n"), command


def test_one_die_is_named_so():
  out = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "1")
  assert out.returncode == 0 and "t=350 with 1 die: bank" in out.stdout


def _session(lines: str, *args: str) -> subprocess.CompletedProcess:
  """`advise --interactive args` with `lines` on its standard input."""
  return subprocess.run(
      [sys.executable, "-m", "farkle_jax.apps.advise", "--interactive",
       *args], input=lines, cwd=ROOT, env=dict(os.environ),
      capture_output=True, text=True, timeout=300)


def test_an_interactive_session_asks_answers_and_keeps_a_history():
  out = _session("\n".join([
      "abc",                          # not scores: asked again
      "0,0", "", "", "6,5,3,3,3,2",   # counts and t kept: the worked example
      "scores=500,1200 t=350 n=2",    # a whole query on one line
      "history",
      "", "", "50", "", "6",          # t=50 with six dice: never reached
      "0,0,0",                        # three scores for two players
      "q"]) + "\n")
  assert out.returncode == 0 and not out.stderr, out.stderr
  text = out.stdout
  assert "SolvedGame('shipped:facebook', players=2" in text
  assert "error: scores 'abc': expected integers" in text
  assert "5 3 3 3           350         350          2         0.509711" in (
      text)
  assert "b=500 d=1200 f=0 e=0, t=350 with 2 dice: bank" in text
  assert ("   1  scores=0,0 counts=0,0 t=0 roll=6,5,3,3,3,2\n"
          "   2  scores=500,1200 t=350 n=2\n") in text
  assert "error: t=50 with n=6 dice to roll cannot be reached" in text
  assert "error: scores 0,0,0: expected 2 banked scores" in text
  assert "Traceback" not in text


def test_an_interactive_session_answers_as_json_and_ends_with_the_input():
  out = _session("scores=0,0 t=650 roll=1,1,5\n", "--shipped", "default",
                 "--json")
  assert out.returncode == 0, out.stderr
  answer = out.stdout[out.stdout.index("{"):out.stdout.rindex("}") + 1]
  assert json.loads(answer)["choices"][0]["kept"] == [5, 1, 1]


def test_interactive_with_a_position_is_refused_in_one_line():
  out = _advise("--interactive", "--roll", "6,5,3,3,3,2")
  assert out.returncode == 2
  assert out.stderr.strip().startswith("error: --roll: --interactive asks")


def test_at_a_terminal_without_a_position_it_asks():
  """No position flag at a terminal: the session, where readline's arrow
  up recalls the last query whole."""
  child = pexpect.spawn(sys.executable, ["-m", "farkle_jax.apps.advise",
                                         "--shipped", "default"],
                        cwd=ROOT, env=dict(os.environ), encoding="utf-8",
                        timeout=120)
  child.expect(r"scores \[0,0\]: ")
  child.sendline("0,0")
  child.expect(r"farkle counts \[0,0\]: ")
  child.sendline("")
  child.expect(r"turn total \[0\]: ")
  child.sendline("")
  child.expect(r"roll \[none: bank or roll\]: ")
  child.sendline("1,1,5,2,3,4")
  child.expect(r"then, at t=\d+")
  child.expect(r"scores \[0,0\]: ")
  child.send("\x1b[A")   # arrow up
  child.sendline("")
  child.expect(r"then, at t=\d+")
  child.sendline("history")
  child.expect(r"2  scores=0,0 counts=0,0 t=0 roll=1,1,5,2,3,4")
  child.sendline("q")
  child.expect(pexpect.EOF)
  child.close()
  assert child.exitstatus == 0
