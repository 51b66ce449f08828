"""`farkle`: one command, a subcommand for each tool.

    farkle solve --config default --workdir runs/default
    farkle advise --b 0 --d 0 --roll 6,5,3,3,3,2
    farkle <command> --help

`python -m farkle_jax` is the same command; `python -m farkle_jax.main` and
`python -m farkle_jax.apps.<command>` run the same code. Only the command
asked for is imported: the overview and a query stay fast.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import textwrap
from typing import NamedTuple, Sequence

from farkle_jax import configs   # (file listings: no solver imported)
from farkle_jax.apps import command_help

USAGE_EXIT = 2


class Command(NamedTuple):
  module: str   # its module, with `cli()` and a docstring of examples
  summary: str  # one line for `farkle --help`


COMMANDS = {
    "solve": Command("farkle_jax.main", "Solve a rule set: every "
                     "position's win probability (a rerun resumes)"),
    "advise": Command("farkle_jax.apps.advise", "What to keep and whether "
                      "to roll on, for a position and a roll"),
    "table": Command("farkle_jax.apps.table", "A turn's table: bank or "
                     "roll at each turn total and number of dice"),
    "analyze": Command("farkle_jax.apps.analyze", "Strategies compared: "
                       "expected score, matches, komi, seats, plots"),
    "play": Command("farkle_jax.apps.play", "Play against the computer "
                    "in a terminal"),
    "serve": Command("farkle_jax.apps.serve", "The web explorer, in a "
                     "browser (localhost)"),
}


def overview() -> str:
  """`farkle --help`: the commands, one line each, and the configs."""
  lines = ["usage: farkle <command> [flags]", "",
           "The exact Farkle solver: any rules, dice and number of players.",
           "", "commands:"]
  lines += [f"  {name:<9}{c.summary}" for name, c in COMMANDS.items()]
  lines += ["", "examples:",
            "  farkle advise --b 0 --d 0 --roll 6,5,3,3,3,2   "
            "# shipped values",
            "  farkle solve --config default --workdir runs/default   "
            "# seconds",
            "  farkle table --workdir runs/default --b 0 --d 0",
            "", "shipped configs (--config NAME, or a file's path):"]
  for name in configs.names():
    text = textwrap.wrap(configs.summary(name).split(". ")[0], 57)
    lines += [f"  {name:<20}{text[0]}"] + [f"{'':22}{t}" for t in text[1:]]
  lines += ["", "farkle <command> --help lists the command's flags with "
            "examples; -v shows the", "log records as a run goes."]
  return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
  """Runs `farkle ARGV` (default: the process's arguments)."""
  argv = list(sys.argv[1:] if argv is None else argv)
  if not argv or argv[0] in ("-h", "--help", "help"):
    if argv[1:2] and argv[1] in COMMANDS:   # farkle help advise
      argv = [argv[1], "--help"]
    else:
      command_help.say(overview())
      sys.exit(0)
  name = argv[0]
  if name not in COMMANDS:
    close = difflib.get_close_matches(name, list(COMMANDS), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    print(f"error: {name!r} is not a farkle command{hint} (commands: "
          f"{', '.join(COMMANDS)}; farkle --help)", file=sys.stderr)
    sys.exit(USAGE_EXIT)
  sys.argv = [f"farkle {name}", *argv[1:]]
  importlib.import_module(COMMANDS[name].module).cli()


if __name__ == "__main__":
  main()
