"""The advisor's command line: the published worked example, a decision
alone, JSON, and illegal input refused in one line."""

import json
import os

import pytest

from conftest import COMMANDS, ROOT


def _advise(*args):
  """`python -m farkle_jax.apps.advise args`, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS("farkle_jax.apps.advise", *args)


def test_worked_example_from_the_shipped_values():
  out = _advise("--b", "0", "--d", "0", "--roll", "6,5,3,3,3,2")
  assert out.returncode == 0, out.stderr
  lines = out.stdout.splitlines()
  rows = [l.split() for l in lines[2:5]]
  assert rows[0][:1] == ["5"] and rows[0][-2:] == ["0.511005", "best"]
  assert rows[1][:4] == ["5", "3", "3", "3"] and rows[1][-1] == "0.509711"
  assert rows[2][:3] == ["3", "3", "3"] and rows[2][-1] == "0.506680"
  assert "roll" in lines[5] and "not allowed below 300" in lines[5]


def test_decision_alone_and_json():
  out = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "2", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["best"] == "bank" and got["bank"] > got["roll"]
  text = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "2").stdout
  assert f"bank {got['bank']:.6f}, roll {got['roll']:.6f}" in text


def test_json_advice_from_a_workdir(tiny_runs):
  workdir = tiny_runs("facebook")[3]
  out = _advise("--workdir", workdir, "--b", "0", "--d", "0", "--roll",
                "1,1,1,5,2,2", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got["choices"][0]["wins_now"]      # 1050 >= goal 1000
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
  """Every advise command of README.md that needs no solve of its own runs
  (the optional `[--json]` both ways), and its example output is the
  command's output, line for line."""
  readme = open(os.path.join(ROOT, "README.md")).read()
  commands = [l for l in readme.splitlines()
              if l.startswith("python -m farkle_jax.apps.advise")
              and "--workdir" not in l]
  assert len(commands) >= 2
  for line in commands:
    args = line.split()[3:]
    for optional in ([], ["--json"]) if "[--json]" in args else ([],):
      out = _advise(*[a for a in args if a != "[--json]"], *optional)
      assert out.returncode == 0, (line, out.stderr)
  shown = readme.split("```\n$ python -m farkle_jax.apps.advise ")[1]
  command, output = shown.split("\n```")[0].split("\n", 1)
  out = _advise(*command.split())
  assert out.returncode == 0 and out.stdout == output + "\n", out.stdout


def test_one_die_is_named_so():
  out = _advise("--b", "0", "--d", "0", "--t", "350", "--n", "1")
  assert out.returncode == 0 and "t=350 with 1 die: bank" in out.stdout
