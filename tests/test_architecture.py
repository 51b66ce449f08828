"""The package's shape: layers that import only downwards, one owner of the
state index, names that say one thing."""

import ast
import itertools
import os

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "farkle_jax")
# game -> solver -> strategy -> entry points: a module may import its own
# layer and the layers below it.
LAYERS = {"game": 0, "solver": 1, "strategy": 2, "": 3}


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
  if parts[0] in ("game", "solver", "strategy"):
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
  names |= {"game", "solver", "strategy"}
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
