"""The help of a command: what it does, worked examples, every flag.

`farkle <command> --help` prints the command module's docstring (what it
does and its examples) and every flag the command takes, its own and the
shared ones (`--b`, `--scores`, `--verbose`, ...), each with its default;
then it exits 0. absl's own help would hide the shared flags and exit 1.
"""

from __future__ import annotations

import os
import sys
import textwrap

from absl import flags

HELP_FLAGS = ("-h", "--help", "-?", "--helpshort", "--helpfull")
_SHARED = "farkle_jax.apps.command_line"
_WIDTH = 79


def render(module: str, prog: str) -> str:
  """The help text of the command in `module`, run as `prog`."""
  doc = (getattr(sys.modules.get(module), "__doc__", None) or "").strip()
  lines = [f"usage: {_program(prog, module)} [flags]", ""]
  if doc:
    lines += [doc, ""]
  own = _flags_of(module)
  shared = [f for f in _flags_of(_SHARED) if f.name not in
            {g.name for g in own}]
  lines.append("flags:")
  for flag in own + shared:
    lines += _describe(flag)
  if any(f.name == "config" for f in own):
    lines += ["", "Any config field can be set on the command line, e.g. "
              "--config.rules.goal=2000", "or --config.solver.tol=1e-10."]
  return "\n".join(lines)


def _program(prog: str, module: str) -> str:
  """`farkle advise`, or `python -m farkle_jax.apps.advise` as run."""
  if prog.startswith("farkle"):
    return prog
  spec = getattr(sys.modules.get(module), "__spec__", None)
  return f"python -m {spec.name}" if spec is not None else prog


def _flags_of(module: str) -> list:
  """The flags `module` defines, by name (aliases once)."""
  found = flags.FLAGS.flags_by_module_dict().get(module, [])
  if not found and module in sys.modules:   # run as __main__
    path = getattr(sys.modules[module], "__file__", None)
    found = flags.FLAGS.flags_by_module_dict().get(path or "", [])
  unique = {f.name: f for f in found}
  return sorted(unique.values(), key=lambda f: f.name)


def _describe(flag) -> list[str]:
  """`--name (default ...)` and its help, wrapped."""
  if flag.boolean:
    head = f"  --[no]{flag.name}"
  else:
    head = f"  --{flag.name}"
  default = flag.default_as_str if flag.default is not None else "none"
  if flag.boolean:
    default = "true" if flag.default else "false"
  head += f" (default: {default.strip(chr(39))})"
  text = flag.help or ""
  values = getattr(flag.parser, "enum_values", None)
  if values and "<" not in text:
    text = f"{text} One of: {', '.join(values)}."
  body = textwrap.wrap(text, _WIDTH - 6) or [""]
  return [head] + [f"      {line}" for line in body]


def example(module: str, prog: str) -> str:
  """`e.g. <the docstring's first example>; <prog> --help lists ...`."""
  doc = getattr(sys.modules.get(module), "__doc__", None) or ""
  name = _program(prog, module)
  first = next((line.split("#")[0].strip() for line in doc.splitlines()
                if line.strip().startswith(("farkle ", "python -m "))), None)
  where = f"{name} --help lists every flag"
  return f"e.g. {first}; {where}" if first else where


def say(text: str) -> None:
  """Prints `text`; a reader that stops early (`| head`) ends it quietly."""
  try:
    print(text, flush=True)
  except BrokenPipeError:
    closed_pipe()


def closed_pipe() -> None:
  """Exits 0 once stdout's reader has gone: what it read was what it
  wanted (Python would otherwise complain again at exit)."""
  os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  sys.exit(0)
