"""The shipped configs, by name: `farkle solve --config facebook`.

Each module here is a config file as `ml_collections` reads it (a
`get_config()`; variants import the one they vary). The repository's
`configs/<name>.py` re-export them for `python -m farkle_jax.main --config
configs/<name>.py`; a name here works from any directory.

    farkle solve --config default --workdir runs/default
    farkle solve --config tiny:minimal --workdir /tmp/t    # with its argument
"""

from __future__ import annotations

import difflib
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def names() -> list[str]:
  """The shipped configs' names, sorted."""
  return sorted(f[:-3] for f in os.listdir(HERE)
                if f.endswith(".py") and not f.startswith("_"))


def summary(name: str) -> str:
  """The first line of a shipped config's docstring (what it solves)."""
  with open(os.path.join(HERE, f"{name}.py"), encoding="utf-8") as f:
    text = f.read()
  doc = text.split('"""')[1] if text.startswith('"""') else ""
  return " ".join(doc.strip().split("\n\n")[0].split())


def resolve(spec: str) -> str | None:
  """A config spec as `ml_collections` takes it: a file path as given
  (`path.py[:arg]`), a shipped name (`name[:arg]`) as its file here; None
  if it is neither an existing file nor a shipped name."""
  path, colon, arg = spec.partition(":")
  if os.path.isfile(path):
    return spec
  if path in names():
    return os.path.join(HERE, f"{path}.py") + colon + arg
  return None


def unknown(spec: str) -> str:
  """One line for a --config that is neither a file nor a shipped name."""
  path = spec.partition(":")[0]
  close = difflib.get_close_matches(path, names(), n=1)
  hint = f"; did you mean {close[0]}?" if close else ""
  return (f"--config={spec}: no such file or shipped config{hint} "
          f"(shipped: {', '.join(names())})")
