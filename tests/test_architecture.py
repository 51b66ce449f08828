"""The package's shape: layers that import only downwards, one owner of the
state index, names that say one thing."""

import ast
import itertools
import os
import re

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "farkle_jax")
# game -> solver -> strategy -> entry points (apps/, the shipped configs
# a solve runs, and the package's top: main.py and the public face): a
# module may import its own layer and the layers below it.
LAYERS = {"game": 0, "solver": 1, "strategy": 2, "apps": 3, "configs": 3,
          "": 3}


def _modules():
  for folder, _, files in os.walk(PACKAGE):
    for name in files:
      if name.endswith(".py"):
        path = os.path.join(folder, name)
        yield os.path.relpath(path, PACKAGE), path


def _layer(rel: str) -> int:
  top = rel.split(os.sep)[0] if os.sep in rel else ""
  return LAYERS[top]


def _imported(tree: ast.AST) -> set[str]:
  """Dotted names of the farkle_jax modules a module imports."""
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names |= {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module:
      names.add(node.module)
      names |= {f"{node.module}.{a.name}" for a in node.names}
  return {n for n in names if n.startswith("farkle_jax")}


def _target_layer(dotted: str) -> int | None:
  parts = dotted.split(".")[1:]
  if not parts:
    return None   # `import farkle_jax`: the package itself (64-bit mode)
  if parts[0] in ("game", "solver", "strategy", "apps", "configs"):
    return LAYERS[parts[0]]
  if os.path.exists(os.path.join(PACKAGE, parts[0] + ".py")):
    return LAYERS[""]
  return None


def test_every_module_belongs_to_a_layer():
  for rel, _ in _modules():
    assert _layer(rel) in LAYERS.values(), rel


def test_imports_only_go_down():
  wrong = []
  for rel, path in _modules():
    tree = ast.parse(open(path).read())
    for dotted in _imported(tree):
      target = _target_layer(dotted)
      if target is not None and target > _layer(rel):
        wrong.append(f"{rel} imports {dotted}")
  assert not wrong, wrong


def test_the_layer_check_sees_a_wrong_import():
  tree = ast.parse("from farkle_jax.strategy import policies\n")
  assert _target_layer(max(_imported(tree))) > LAYERS["solver"]


def test_only_the_layout_numbers_keys():
  owners = []
  for rel, path in _modules():
    text = open(path).read()
    if "unravel_index" in text or "ravel_multi_index" in text:
      owners.append(rel)
  # The two-player layout and the N-player one (game/seats.py).
  assert sorted(owners) == [os.path.join("game", "layout.py"),
                            os.path.join("game", "seats.py")]


def _distance(a: str, b: str) -> int:
  """Levenshtein distance."""
  prev = list(range(len(b) + 1))
  for i, ca in enumerate(a, 1):
    cur = [i]
    for j, cb in enumerate(b, 1):
      cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
    prev = cur
  return prev[-1]


def test_no_two_module_names_one_letter_apart():
  names = {os.path.splitext(os.path.basename(rel))[0] for rel, _ in _modules()}
  names |= {"game", "solver", "strategy", "apps"}
  names.discard("__init__")
  close = [(a, b) for a, b in itertools.combinations(sorted(names), 2)
           if _distance(a, b) <= 1]
  assert not close, close
  assert _distance("table", "tables") == 1  # the check sees such a pair


def test_modules_and_functions_stay_small():
  long = []
  for rel, path in _modules():
    lines = open(path).read().splitlines()
    if len(lines) > 500:
      long.append(f"{rel}: {len(lines)} lines")
    for node in ast.walk(ast.parse("\n".join(lines))):
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        size = node.end_lineno - node.lineno + 1
        if size > 60:
          long.append(f"{rel}:{node.lineno} {node.name}: {size} lines")
  assert not long, long


def _code_lines(path: str) -> list[tuple[int, str]]:
  """(line number, text) of the lines that say something: comments, blank
  lines, lone punctuation and imports are passed over; strings and numbers
  are masked so that a copy with other messages or constants still shows."""
  out = []
  for number, line in enumerate(open(path, encoding="utf-8"), 1):
    text = " ".join(line.split())
    if (len(text) < 4 or text.startswith(("#", "//", "import ", "from "))
        or not re.search(r"\w", text)):
      continue
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "S", text)
    out.append((number, re.sub(r"\b\d[\d_.e]*\b", "0", text)))
  return out


def _shared_runs(a: list, b: list, run: int) -> list[tuple[int, int]]:
  """(line in a, line in b) where `run` code lines in a row are the same."""
  where: dict[tuple, list[int]] = {}
  for i in range(len(b) - run + 1):
    where.setdefault(tuple(t for _, t in b[i:i + run]), []).append(i)
  return [(a[i][0], b[j][0]) for i in range(len(a) - run + 1)
          for j in where.get(tuple(t for _, t in a[i:i + run]), ())]


TWIN_RUN = 6   # code lines in a row that make two places one piece of code


def _twins(paths: dict[str, str]) -> list[str]:
  lines = {rel: _code_lines(path) for rel, path in paths.items()}
  found = []
  for x, y in itertools.combinations(sorted(lines), 2):
    runs = _shared_runs(lines[x], lines[y], TWIN_RUN)
    if runs:
      found.append(f"{x}:{runs[0][0]} ~ {y}:{runs[0][1]} "
                   f"({len(runs)} shared runs)")
  return found


def _sources() -> dict[str, str]:
  out = {}
  for folder, _, files in os.walk(PACKAGE):
    for name in files:
      if name.endswith((".py", ".js")):
        path = os.path.join(folder, name)
        out[os.path.relpath(path, PACKAGE)] = path
  return out


def test_no_two_modules_repeat_each_other():
  """No module pair is a twin: no run of six code lines (strings and
  numbers aside) stands in two modules, Python or the page's JavaScript."""
  assert not _twins(_sources())


def test_the_twin_check_sees_a_copy(tmp_path):
  body = "".join(f"def f{i}(x):\n  return x * {i} + len('{i}')\n"
                 for i in range(4))
  (tmp_path / "a.py").write_text(body)
  (tmp_path / "b.py").write_text("# other words\n" + body.replace("'", '"'))
  found = _twins({n: str(tmp_path / n) for n in ("a.py", "b.py")})
  assert found and found[0].startswith("a.py:1 ~ b.py:2"), found
