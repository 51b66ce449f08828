"""The run configuration: defaults, and checks that fail before any compute
(tolerances and norms: docs/model.md §5).

Config files in `configs/` start from `base(preset)` and override fields.
`check(config)` validates every field and returns the parsed pieces; a bad
value raises `ConfigError` naming the field and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, NamedTuple

import ml_collections

from farkle_jax.game import rules as rules_lib

METHODS = ("auto", "ordered", "wavefront", "value_iteration")
# The stage sweep of seat vectors, for any number of players (the only one
# for three or more; with two, the same code as for three).
SEATS = "seats"
NORMS = ("relative", "absolute")
# The wavefront's chunk row (two players or more): XLA's ops, or one fused
# Pallas kernel (on a GPU through Triton, on a CPU interpreted); auto: the
# kernel on a GPU where a chunk fills it (`methods.wave_kernel_for`).
KERNELS = ("auto", "xla", "pallas")
DTYPES = ("float64", "float32")


class ConfigError(ValueError):
  """A config field with a value that is not allowed."""


class Settings(NamedTuple):
  """Validated solver settings."""
  method: str
  tol: float
  norm: str
  max_iterations: int
  sweeps_per_call: int
  chunk_keys: int
  b_group: int
  newton: bool | None   # None: where it pays (three or more players)
  kernel: str
  dtype: str
  init_value: float
  checkpoint_every: int
  checkpoint_keep: int
  memory_limit_gb: float | None
  compile_cache: str   # "" default directory, "off", or a directory
  slices: tuple[tuple[int, int, int, int], ...]


def base(preset: str = "facebook") -> ml_collections.ConfigDict:
  """Every config field, with the values of a rules preset."""
  if preset not in rules_lib.PRESETS:
    _fail("rules.preset", preset, f"one of {sorted(rules_lib.PRESETS)}")
  c = ml_collections.ConfigDict()
  # Tuples (not lists) so that the command line can override them:
  # --config.rules.single_scores='(100,0,0,0,50,0)'.
  preset_rules = dataclasses.asdict(rules_lib.PRESETS[preset]())
  c.rules = ml_collections.ConfigDict({"preset": preset, **preset_rules})
  c.solver = ml_collections.ConfigDict(dict(
      method="auto",              # one of METHODS or SEATS; auto: wavefront
                                  # on an accelerator, ordered on a CPU
                                  # (value_iteration: the baseline); seats
                                  # for three or more players (wavefront
                                  # there: seat_wave_engine, asked for)
      tol=1e-9,                   # stop when the max change is below this
      norm="relative",            # "relative" |dW|/W or "absolute" |dW|
      max_iterations=1000,
      sweeps_per_call=5,      # sweeps per jitted call (log/checkpoint)
      chunk_keys=2048,            # value_iteration: keys per chunk of a sweep
      b_group=0,                  # ordered: banked scores per sub-batch
                                  # (0: 16 on CPU, a whole stage otherwise)
      # With a penalty, a Newton step on the penalty reads (docs/model.md
      # §4.2, §4.3, §8): ordered, after every sweep (2-3x fewer sweeps,
      # each about 5x dearer on a CPU); wavefront, its exits refreshed now
      # and then (fewer evaluations, not yet less time); three or more
      # players, after every sweep (17 sweeps to 7 on the tiny three-player
      # game, 1.4x less time). None: where it pays, three or more players.
      newton=ml_collections.config_dict.placeholder(bool),
      kernel="auto",              # wavefront: one of KERNELS; auto: the
                                  # fused Pallas kernel on a GPU where a
                                  # chunk fills it, XLA's ops elsewhere
      dtype="float64",
      init_value=0.5,             # initial value of every non-terminal state
  ))
  c.checkpoint = ml_collections.ConfigDict(dict(every=5, keep=2))
  # Refuse runs whose estimated footprint exceeds this; None: device memory.
  c.memory_limit_gb = ml_collections.config_dict.placeholder(float)
  # Compiled programs kept on disk for the next run of the same shapes:
  # "" the default directory (solver/compile_cache.py), "off", or a path.
  c.compile_cache = ""
  # Start-of-turn states (b, d, f, e; scores in points) whose turn tables the
  # run writes to its workdir.
  c.slices = ((0, 0, 0, 0),)
  return c


def _fail(field: str, value: Any, allowed: str):
  raise ConfigError(f"config.{field} = {value!r} is not allowed: {allowed}")


def _number(field, value, kind, low=None, high=None, open_low=False):
  if isinstance(value, bool) or not isinstance(value, kind):
    _fail(field, value, f"a {'number' if kind is not int else 'integer'}")
  if not math.isfinite(value):
    _fail(field, value, "a finite number")
  if low is not None and (value < low or (open_low and value == low)):
    _fail(field, value, f"{'>' if open_low else '>='} {low}"
          + (f" and <= {high}" if high is not None else ""))
  if high is not None and value > high:
    _fail(field, value, f"<= {high}")
  return value


def _check_hand(r: rules_lib.Rules, method: str) -> None:
  """Dice that differ: the scalar pass's methods or the seat engine."""
  if r.dice_alike:
    return
  if method not in ("auto", "ordered", "value_iteration", SEATS):
    _fail("solver.method", method, "'auto', 'ordered', 'value_iteration' "
          f"or '{SEATS}' with dice that differ in one hand (rules.dice)")


def _slices(config, r: rules_lib.Rules) -> list[tuple[int, int, int, int]]:
  slices = []
  if r.hands and tuple(map(tuple, config.slices)) == ((0, 0, 0, 0),):
    # The default table under rules.hands: the opening match-up, player 1
    # (hand 1) against player 2 (hand 2), not hand 1 against itself.
    return [(0, 0, 0, 1)]
  for sl in config.slices:
    if not isinstance(sl, (tuple, list)) or len(sl) != 4:
      _fail("slices", sl, "tuples (b, d, f, e): scores in points, counts")
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in sl):
      _fail("slices", sl, "tuples (b, d, f, e) of integers")
    b, d, f, e = sl
    for name, v in (("b", b), ("d", d)):
      if v % r.step or not r.low <= v < r.goal:
        _fail("slices", sl, f"{name} a multiple of {r.step} in "
              f"[{r.low}, {r.goal - r.step}]")
    for name, v in (("f", f), ("e", e)):
      if not 0 <= v < r.farkle_states:
        _fail("slices", sl, f"{name} in [0, {r.farkle_states - 1}]")
    slices.append((b, d, f, e))
  return slices


def check(config: ml_collections.ConfigDict
          ) -> tuple[rules_lib.Rules, Settings]:
  """Validates a config; returns the rules and the solver settings."""
  try:
    r = rules_lib.from_mapping(config.rules.to_dict())
  except rules_lib.RulesError as e:
    raise ConfigError(f"config.{e}") from None
  except TypeError as e:
    raise ConfigError(f"config.rules: {e}") from None
  s = config.solver
  if s.method not in METHODS + (SEATS,):
    _fail("solver.method", s.method, f"one of {METHODS + (SEATS,)}")
  if s.norm not in NORMS:
    _fail("solver.norm", s.norm, f"one of {NORMS}")
  if s.get("kernel", "auto") not in KERNELS:
    _fail("solver.kernel", s.kernel, f"one of {KERNELS}")
  if s.dtype not in DTYPES:
    _fail("solver.dtype", s.dtype, f"one of {DTYPES}")
  _number("solver.tol", s.tol, (int, float), 0, open_low=True)
  _check_hand(r, s.method)
  if s.dtype == "float32" and s.tol < 1e-6:
    _fail("solver.tol", s.tol, ">= 1e-6 with solver.dtype='float32' "
          "(float32 holds about 7 significant digits); use float64")
  _number("solver.max_iterations", s.max_iterations, int, 1)
  _number("solver.sweeps_per_call", s.sweeps_per_call, int, 1)
  _number("solver.chunk_keys", s.chunk_keys, int, 1)
  _number("solver.b_group", s.b_group, int, 0)
  if s.newton is not None and not isinstance(s.newton, bool):
    _fail("solver.newton", s.newton, "True, False or None (where it pays)")
  _number("solver.init_value", s.init_value, (int, float), 0, 1)
  _number("checkpoint.every", config.checkpoint.every, int, 1)
  _number("checkpoint.keep", config.checkpoint.keep, int, 1)
  if config.memory_limit_gb is not None:
    _number("memory_limit_gb", config.memory_limit_gb, (int, float), 0,
            open_low=True)
  if not isinstance(config.get("compile_cache", ""), str):
    _fail("compile_cache", config.compile_cache, "a directory, '' (the "
          "default directory) or 'off'")
  slices = _slices(config, r)
  if config.memory_limit_gb is not None:
    config_limit = float(config.memory_limit_gb)
  else:
    config_limit = None
  settings = Settings(
      method=s.method, tol=float(s.tol), norm=s.norm,
      max_iterations=s.max_iterations,
      sweeps_per_call=s.sweeps_per_call, chunk_keys=s.chunk_keys,
      b_group=s.b_group, newton=s.newton, kernel=s.get("kernel", "auto"),
      dtype=s.dtype, init_value=float(s.init_value),
      checkpoint_every=config.checkpoint.every,
      checkpoint_keep=config.checkpoint.keep,
      memory_limit_gb=config_limit,
      compile_cache=config.get("compile_cache", ""), slices=tuple(slices))
  return r, settings


def check_workdir(workdir: str | None) -> str:
  """A workdir the run can write: an existing or creatable directory.

  Raises:
    ConfigError: empty, a file, or not writable.
  """
  if not workdir:
    raise ConfigError("--workdir is empty: give a directory for the "
                      "checkpoints and results")
  if os.path.exists(workdir) and not os.path.isdir(workdir):
    raise ConfigError(f"--workdir={workdir} is a file, not a directory")
  for name in ("checkpoints", "tables"):   # what the run writes in it
    inner = os.path.join(workdir, name)
    if os.path.exists(inner) and not os.path.isdir(inner):
      raise ConfigError(f"--workdir={workdir}: {inner} is a file where the "
                        "run keeps a directory; move it away")
  parent = workdir
  while not os.path.exists(parent):  # the nearest existing ancestor
    parent = os.path.dirname(os.path.abspath(parent))
  if not os.access(parent, os.W_OK | os.X_OK):
    raise ConfigError(f"--workdir={workdir}: {parent} is not writable")
  return workdir
