"""README.md against the product: its example commands print what it shows,
and every time it gives a command agrees with its table of times.

The README's convention ("The README's examples are tested" there):

* A fenced block tagged `console` shows commands and what they print: a
  line starting with `$ ` is a command, and the lines after it, up to the
  next command, are a part of its output. Each of them must appear in the
  output (stdout, then stderr) as an exact substring, trailing spaces
  ignored; a line `...` stands for lines left out.
* Every command of a `console` or `bash` block carries its time in a
  comment on its (last) line: `# under 1 s`, `# about 13 s`,
  `# 2 min 40 s: long`. A time of a minute or more says `long`.
* A console command whose time is under SHORT seconds is run here: in
  README order, from one temporary directory (so `runs/default` is made
  there by the README's solve and read by the commands after it; the same
  command line runs once), with `farkle` as `python -m farkle_jax` (an
  uninstalled checkout works) on the CPU, whose figures the README shows.
  Longer commands are shown only, and so is a short one that reads a
  workdir only a longer one writes.
* A command listed in the table "How long things take" (the solve of a
  shipped config, the test commands) carries that table's time.

This test checks the README against the product: the values it shows are
what the commands print today. Whether those values are the published
figures is checked elsewhere, against the papers' numbers kept in
tests/data (published.json: tests/test_published.py, test_scoring.py,
test_layout.py, test_queries.py, test_solved_game.py).
"""

import os
import re
import shlex
import subprocess

import pytest

from conftest import ROOT, CommandLines

README = os.path.join(ROOT, "README.md")
SHORT = 30          # seconds: a console command timed under this runs here
ELIDED = "..."      # an expected-output line that stands for lines left out
# The commands the README must show with their output (and so this test
# runs): the overview, the worked example, the main job and its table.
REQUIRED = (
    "farkle --help",
    "farkle advise --b 0 --d 0 --roll 6,5,3,3,3,2",
    "farkle solve --config default --workdir runs/default",
    "farkle table --workdir runs/default --b 0 --d 0",
)
_UNITS = {"ms": 0.001, "s": 1, "min": 60, "h": 3600}
_TIME = re.compile(r"(\d+(?:\.\d+)?) ?(ms|s|min|h)\b")
_SPAN = re.compile(r"(?:\d+(?:\.\d+)? ?(?:ms|s|min|h)\b ?)+")


class Command:
  """One command of a README block: its line (continuations joined), the
  comment on it, and (console blocks) the output lines shown after it."""

  def __init__(self, kind: str, line_no: int, text: str):
    self.kind, self.line_no = kind, line_no
    self.command, _, self.comment = text.partition(" # ")
    self.command = self.command.strip()
    self.comment = self.comment.strip()
    self.expected: list[str] = []

  def __repr__(self):
    return f"README.md:{self.line_no}: {self.command}"

  def seconds(self) -> float | None:
    """The first time the comment gives, in seconds (None: none)."""
    span = _SPAN.search(self.comment)
    if span is None:
      return None
    return sum(float(n) * _UNITS[u] for n, u in _TIME.findall(span.group()))

  def is_short(self) -> bool:
    seconds = self.seconds()
    return (self.kind == "console" and seconds is not None
            and seconds < SHORT and "long" not in self.comment)


def blocks(text: str):
  """(tag, first line number, lines) of each fenced block of `text`."""
  found, tag, start, lines = [], None, 0, []
  for number, line in enumerate(text.splitlines(), start=1):
    stripped = line.strip()
    if tag is None and stripped.startswith("```"):
      tag, start, lines = stripped[3:].strip(), number + 1, []
      indent = len(line) - len(line.lstrip())
    elif tag is not None and stripped == "```":
      found.append((tag, start, lines))
      tag = None
    elif tag is not None:
      lines.append(line[indent:])
  assert tag is None, f"README.md: a block opened and never closed ({tag})"
  return found


def commands(text: str) -> list[Command]:
  """Every command of the console and bash blocks of `text`, in order."""
  out = []
  for tag, start, lines in blocks(text):
    if tag == "console":
      for offset, line in enumerate(lines):
        if line.startswith("$ "):
          out.append(Command("console", start + offset, line[2:]))
        else:
          assert out and out[-1].kind == "console" and (
              out[-1].line_no >= start), (
                  f"README.md:{start + offset}: output before a command")
          out[-1].expected.append(line.rstrip())
    elif tag == "bash":
      pending, first = "", None
      for offset, line in enumerate(lines):
        body = line.strip()
        if not pending and (not body or body.startswith("#")):
          continue
        first = start + offset if not pending else first
        if body.endswith("\\"):
          pending += body[:-1] + " "
          continue
        out.append(Command("bash", first, pending + body))
        pending = ""
  return out


def timing_table(text: str) -> dict[str, str]:
  """The commands of "How long things take" and their times: the first
  time span of each row whose command is a code span."""
  section = text.split("## How long things take", 1)[1].split("\n## ", 1)[0]
  table = {}
  for row in section.splitlines():
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) < 3 or not cells[1].startswith("`"):
      continue
    time = _SPAN.search(cells[2])
    assert time, f"no time in the row of {cells[1]}"
    table[cells[1].strip("`")] = time.group().strip()
  return table


def normalized(command: str) -> str:
  """A command as the timing table writes it: `farkle solve --config X`
  for the main job's every form, the last of `a && b`, no workdir, no
  progress or verbosity flag."""
  command = command.split("&&")[-1].strip()
  command = re.sub(r"^python -m farkle_jax\.main\b", "farkle solve", command)
  command = re.sub(r"^python -m farkle_jax\.apps\.(\w+)", r"farkle \1",
                   command)
  command = re.sub(r"^python -m farkle_jax\b", "farkle", command)
  command = re.sub(r"--config[= ]configs/(\w+)\.py", r"--config \1", command)
  command = re.sub(r"--workdir[= ]\S+|--progress[= ]\S+|(?<!\S)-v\b", "",
                   command)
  return " ".join(command.split())


def missing_lines(expected: list[str], output: str) -> list[str]:
  """The lines of `expected` that `output` does not contain (trailing
  spaces ignored on both sides; `...` and blank lines stand for any)."""
  text = "\n".join(line.rstrip() for line in output.splitlines())
  return [line for line in expected
          if line.strip() not in ("", ELIDED) and line.rstrip() not in text]


def _text() -> str:
  with open(README) as f:
    return f.read()


def test_every_command_gives_its_time_and_long_ones_say_so():
  wrong = []
  for command in commands(_text()):
    seconds = command.seconds()
    if seconds is None:
      wrong.append(f"{command}: no time in its comment")
    elif seconds >= 60 and "long" not in command.comment:
      wrong.append(f"{command}: {command.comment!r} is not marked long")
    if command.kind == "console" and not command.command.startswith(
        "farkle "):
      wrong.append(f"{command}: a console command is a farkle command")
  assert not wrong, "\n".join(wrong)


def test_the_times_of_the_listed_commands_are_the_tables():
  text = _text()
  table = timing_table(text)
  assert {"farkle solve --config default", "farkle solve --config facebook",
          "python -m pytest -q"} <= set(table), table
  seen, wrong = set(), []
  for command in commands(text):
    listed = table.get(normalized(command.command))
    if listed is None:
      continue
    seen.add(normalized(command.command))
    if listed not in command.comment:
      wrong.append(f"{command}: {command.comment!r}, the table: {listed}")
  assert not wrong, "\n".join(wrong)
  assert {"farkle solve --config default",
          "python -m pytest -q"} <= seen, seen


def test_a_changed_figure_is_seen():
  """The comparison of shown and printed lines, on a line of the README."""
  printed = "  5                  50          50          5         0.511005  best \n"
  assert not missing_lines(["  5                  50          50          5"
                            "         0.511005  best"], printed)
  assert missing_lines(["  5                  50          50          5"
                        "         0.511006  best"], printed)
  assert not missing_lines([ELIDED, ""], printed)


def _run(command: str, cwd, lines: CommandLines
         ) -> subprocess.CompletedProcess:
  """`command` as `python -m farkle_jax ...` in `cwd` (forked from one
  worker: a JAX start-up each would cost more than most commands)."""
  args = shlex.split(command)
  assert args[0] == "farkle", command
  return lines("farkle_jax", *args[1:], timeout=600, cwd=cwd)


def _workdir(command: str) -> str | None:
  found = re.search(r"--workdir[= ](\S+)", command)
  return found.group(1) if found else None


def test_the_short_commands_print_what_the_readme_shows(tmp_path):
  lines = CommandLines(env={"JAX_PLATFORMS": "cpu"})   # the README's figures
  try:
    _check_short_commands(tmp_path, lines)
  finally:
    lines.close()


def _check_short_commands(tmp_path, lines: CommandLines) -> None:
  ran, long_workdirs, failures = {}, set(), []
  for command in commands(_text()):
    if command.kind != "console":
      continue
    workdir = _workdir(command.command)
    if not command.is_short():
      if workdir:
        long_workdirs.add(workdir)
      continue
    if workdir in long_workdirs:
      continue
    if command.command not in ran:
      ran[command.command] = _run(command.command, tmp_path, lines)
    out = ran[command.command]
    if out.returncode != 0:
      failures.append(f"{command}: exit {out.returncode}\n"
                      f"{out.stderr[-2000:]}")
      continue
    missing = missing_lines(command.expected, out.stdout + out.stderr)
    if missing:
      failures.append(f"{command}: these lines are not in its output:\n"
                      + "\n".join(missing) + "\n--- its output:\n"
                      + out.stdout[-3000:])
  assert not failures, "\n\n".join(failures)
  assert set(REQUIRED) <= set(ran), set(REQUIRED) - set(ran)
