"""How the entry points start and fail: one line, never a traceback.

Every entry point (`main`, `table`, `analyze`) runs through `run(main)`: it
parses the flags itself, so that a mistake on the command line (an unknown or
misspelled flag or config field, a config file that does not exist or fails
to load, a value of the wrong type) ends in one line on stderr with exit code
2, and a failure of the run (memory, a damaged or foreign checkpoint or
file, a run that did not converge, a locked workdir, a full disk, any OS
error with its path) in one line with exit code 1, whatever the number of
players. Ctrl-C ends in one line with exit code 130 (what was saved stays);
anything else, a bug, in one line with exit code 3. `--verbose` shows the
traceback as well, for bug reports.
"""

from __future__ import annotations

import difflib
import faulthandler
import importlib.util
import logging as py_logging
import os
import re
import sys
import threading
import traceback
import zipfile
from typing import Callable, NoReturn

from absl import app, flags
from absl import logging as absl_logging

from farkle_jax import configs
from farkle_jax.apps import command_help
from farkle_jax.strategy import positions

USAGE_EXIT = 2    # the command line asks for something not allowed
FAILURE_EXIT = 1  # the run could not do what was asked
INTERNAL_EXIT = 3  # a failure nobody foresaw: a bug, to report
INTERRUPTED_EXIT = 130  # Ctrl-C (SIGINT), as shells count it
# Once a command has said its last line, the interpreter's shutdown (joining
# library threads, their exit hooks) gets this long; a thread that a Ctrl-C
# left waiting on a lock must not keep the command alive.
EXIT_GRACE_S = 5.0
# The module of the command being run (its docstring and flags are its help).
_ENTRY = ["__main__"]
_REQUIRED: list[str] = []   # its flags that must be given

# Our errors by module and name: a command imports only what it uses (a
# query must not pay for the solver's imports), and an error whose module
# was never imported cannot have been raised.
_USAGE_ERROR_NAMES = (("farkle_jax.solver.configuration", "ConfigError"),
                      ("farkle_jax.strategy.catalog", "StrategyError"),
                      ("farkle_jax.strategy.positions", "PositionError"))
_FAILURE_NAMES = (("farkle_jax.solver.memory", "MemoryRefused"),
                  ("farkle_jax.solver.checkpointing", "CheckpointMismatch"),
                  ("farkle_jax.solver.driver", "SolveFault"),
                  ("farkle_jax.solver.driver", "NotConverged"),
                  ("farkle_jax.solver.seat_wave_engine", "Alternating"),
                  ("farkle_jax.solver.locking", "WorkdirLocked"),
                  ("farkle_jax.solver.results", "ResultsError"))


def _loaded(names: tuple[tuple[str, str], ...]) -> tuple[type, ...]:
  """The classes among `names` whose modules are imported."""
  return tuple(getattr(sys.modules[m], c) for m, c in names
               if m in sys.modules)


def our_usage_errors() -> tuple[type, ...]:
  return _loaded(_USAGE_ERROR_NAMES)


def our_failures() -> tuple[type, ...]:
  return _loaded(_FAILURE_NAMES)

_VERBOSE = flags.DEFINE_bool(
    "verbose", False, "Show the log records as the run goes (-v for short) "
    "and, on an error, its traceback (for bug reports).")


class _NoTpuChatter(py_logging.Filter):
  """Drops JAX's note that a backend it probes for (TPU) is absent."""

  def filter(self, record):
    return "Unable to initialize backend" not in record.getMessage()


def _verbose(argv: list[str]) -> bool:
  return any(a in ("--verbose", "--verbose=true", "--verbose=True")
             for a in argv)


def fail(message: str, code: int, exc: BaseException | None = None,
         verbose: bool = False) -> NoReturn:
  """Prints `error: message` (and the traceback if `verbose`), exits."""
  if verbose and exc is not None:
    traceback.print_exception(exc)
  print(f"error: {message}", file=sys.stderr)
  sys.exit(code)


def _root_cause(exc: BaseException) -> BaseException:
  """The first error of ours in the chain, else the innermost one."""
  chain = _chain(exc)
  for e in chain:
    if isinstance(e, our_usage_errors() + our_failures()):
      return e
  return chain[-1]


def _flag_message(exc: BaseException) -> str:
  """One line for a flag that could not be parsed."""
  if isinstance(exc, flags.UnrecognizedFlagError) and exc.flagname:
    name = exc.flagname
    if name.startswith("config.") and "config" in flags.FLAGS:
      return _no_such_field(name[len("config."):],
                            _config_fields(flags.FLAGS["config"].value))
    close = difflib.get_close_matches(name, list(flags.FLAGS), n=1)
    hint = f"; did you mean --{close[0]}?" if close else ""
    return f"--{name}: no such flag{hint}"
  cause = _root_cause(exc)
  text = str(cause).strip().splitlines()
  line = next((t for t in reversed(text) if t.strip()), type(cause).__name__)
  # A message quoted from a traceback keeps its "pkg.SomeError: " prefix.
  line = re.sub(r"^[\w.]+(Error|Exception): ", "", line.strip())
  # absl names the flag only in its own message ("flag --x=0: ..."), not
  # in the cause it wraps (a bound check's "0 is not a positive integer").
  named = re.match(r"flag (--\S+?): ", str(exc))
  if isinstance(exc, flags.IllegalFlagValueError) and named:
    flag = named.group(1)
    if flag.split("=")[0] not in line:
      line = f"{flag}: {line}"
  return line


def _config_fields(config, prefix: str = "") -> list[str]:
  if config is None or not hasattr(config, "items"):
    return []
  names = []
  for k, v in config.items():
    names.append(prefix + k)
    if hasattr(v, "items"):
      names += _config_fields(v, prefix + k + ".")
  return names


def _config_file(argv: list[str], with_arg: bool = False) -> str | None:
  """The --config file named last on the command line (and its :arg)."""
  found = None
  for i, a in enumerate(argv):
    if a.startswith("--config="):
      found = a[len("--config="):]
    elif a == "--config" and i + 1 < len(argv):
      found = argv[i + 1]
  if found is None or with_arg:
    return found
  return found.split(":")[0]


def _config_value(argv: list[str]):
  """The config as loaded by its flag, else loaded here (for hints)."""
  value = flags.FLAGS["config"].value if "config" in flags.FLAGS else None
  if value is None:
    spec = _config_file(argv, with_arg=True)
    path, _, arg = spec.partition(":") if spec else (None, "", "")
    loader = importlib.util.spec_from_file_location("_config", path or "")
    if loader is None:
      return None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    value = module.get_config(*([arg] if arg else []))
  return value


def _unknown_override(argv: list[str]) -> str | None:
  """One line for the first --config.x override the config lacks."""
  try:
    fields = _config_fields(_config_value(argv))
  except Exception:  # the config itself failed: reported as such
    return None
  for a in argv:
    if a.startswith("--config.") or a.startswith("--noconfig."):
      name = a.split("=")[0].split("config.", 1)[1]
      if fields and name not in fields:
        return _no_such_field(name, fields)
  return None


def _no_such_field(name: str, fields: list[str]) -> str:
  """One line for a config field that does not exist, with the closest."""
  close = difflib.get_close_matches(name, fields, n=1)
  hint = f"; did you mean --config.{close[0]}?" if close else ""
  return f"--config.{name}: the config has no such field{hint}"


def _parse(argv: list[str]) -> list[str]:
  argv = ["--verbose" if a == "-v" else a for a in argv]
  if any(a in command_help.HELP_FLAGS for a in argv[1:]):
    command_help.say(command_help.render(_ENTRY[0], argv[0]))
    sys.exit(0)
  argv = _shipped_config(argv)
  verbose = _verbose(argv)
  try:
    rest = flags.FLAGS(argv)
    if "config" in flags.FLAGS and flags.FLAGS["config"].present:
      flags.FLAGS["config"].value  # load it now: its errors are usage errors
  except Exception as e:  # every way a command line can be wrong
    fail(_unknown_override(argv) or _flag_message(e), USAGE_EXIT, e, verbose)
  missing = [f"--{n}" for n in _REQUIRED if flags.FLAGS[n].value is None]
  if missing:
    fail(f"missing {' and '.join(missing)} "
         f"({command_help.example(_ENTRY[0], argv[0])})", USAGE_EXIT)
  _quiet(verbose)
  return rest


def _shipped_config(argv: list[str]) -> list[str]:
  """`argv` with a shipped config's name (`--config facebook`) replaced by
  its file; a --config that is neither a file nor a name is refused."""
  spec = _config_file(argv, with_arg=True)
  if spec is None or "config" not in flags.FLAGS:
    return argv
  found = configs.resolve(spec)
  if found is None:
    fail(configs.unknown(spec), USAGE_EXIT)
  out = []
  for i, a in enumerate(argv):
    if a.startswith("--config="):
      a = f"--config={found}"
    elif i > 0 and argv[i - 1] == "--config":
      a = found
    out.append(a)
  return out


class _PlainWarnings(py_logging.Formatter):
  """`warning: message`, as the commands' own lines read."""

  def format(self, record):
    return f"{record.levelname.lower()}: {record.getMessage()}"


def _quiet(verbose: bool) -> None:
  """Log records reach the terminal only with --verbose (-v); otherwise
  warnings and errors, as plain lines."""
  if verbose:
    return
  handler = absl_logging.get_absl_handler()
  handler.setLevel(py_logging.WARNING)
  handler.setFormatter(_PlainWarnings())


def guarded(main: Callable[[list[str]], None]) -> Callable[[list[str]], None]:
  """`main`, with every failure turned into one line and an exit code."""

  def wrapper(argv):
    try:
      main(argv)
    except SystemExit:
      raise
    except BrokenPipeError:   # `| head` has read what it wanted
      command_help.closed_pipe()
    except BaseException as e:  # one line for anything, by its kind
      code, message = classify(e)
      fail(message, code, e, _VERBOSE.value)

  return wrapper


def classify(exc: BaseException) -> tuple[int, str]:
  """(exit code, one line) of a failure; see the module doc."""
  if isinstance(exc, KeyboardInterrupt):
    return INTERRUPTED_EXIT, ("interrupted; what was saved stays, and the "
                              "same command resumes a solve from its last "
                              "checkpoint")
  chain = _chain(exc)
  usage = our_usage_errors() + (app.UsageError, flags.Error)
  for e in chain:   # our own errors say best what went wrong
    if isinstance(e, usage):
      return USAGE_EXIT, (_flag_message(e) if isinstance(e, flags.Error)
                          else _first_line(e))
    if isinstance(e, our_failures()):
      return FAILURE_EXIT, _failure_message(e)
  for e in chain:   # the OS's reason, however deep a library wrapped it
    if isinstance(e, OSError):
      return FAILURE_EXIT, _failure_message(e)
  for e in chain:
    if isinstance(e, MemoryError):
      return FAILURE_EXIT, ("out of memory; a smaller model (a lower "
                            "rules.goal or a higher rules.floor) would fit")
    if "RESOURCE_EXHAUSTED" in str(e):
      return FAILURE_EXIT, f"out of memory: {_first_line(e)}"
    if isinstance(e, (zipfile.BadZipFile, EOFError)):
      return FAILURE_EXIT, f"a damaged file: {_first_line(e)}"
  return INTERNAL_EXIT, (f"internal error ({type(exc).__name__}: "
                         f"{_first_line(exc)}); please report it with the "
                         "output of the same command with --verbose")


def _chain(exc: BaseException) -> list[BaseException]:
  """The exception and its causes (or contexts), outermost first."""
  chain = []
  while exc is not None and exc not in chain:
    chain.append(exc)
    exc = exc.__cause__ or exc.__context__
  return chain


def _first_line(exc: BaseException) -> str:
  return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _failure_message(exc: BaseException) -> str:
  if isinstance(exc, OSError) and not isinstance(exc, our_failures()):
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{exc.strerror or _first_line(exc)}{where}"
  return _first_line(exc)


def refuse_given(names: tuple[str, ...], why: str) -> None:
  """Refuses (UsageError) the flags among `names` given on the command
  line, say for another kind of run than the one asked."""
  given = [f"--{n}" for n in names
           if n in flags.FLAGS and flags.FLAGS[n].present]
  if given:
    raise app.UsageError(f"{', '.join(given)}: {why}")


def define_key_flags() -> tuple:
  """--b, --d, --f, --e: a two-player start of turn (flag holders); and
  --hands, which takes the place of --f and --e under rules.hands (read
  them with `key_fields`)."""
  flags.DEFINE_string(
      "hands", None, "Under rules.hands (each player's own dice): the "
      "mover's hand, then each other player's in turn order, numbered "
      "from 1 as the tables number them, e.g. 2,1 (default 1,2,..: player "
      "1 to move).")
  return (
      flags.DEFINE_integer("b", 0, "Banked score of the player to move."),
      flags.DEFINE_integer("d", 0, "Banked score of the opponent."),
      flags.DEFINE_integer("f", 0, "Farkle turns in a row of the player "
                           "to move (under a farkle penalty)."),
      flags.DEFINE_integer("e", 0, "Farkle turns in a row of the opponent "
                           "(under a farkle penalty)."))


def key_fields(rules) -> tuple[int, int]:
  """The (f, e) fields of the key asked for: --f and --e, or under
  rules.hands the hands of --hands (numbered from 1 on the command line,
  from 0 in the key). app.UsageError for the flags of the other kind."""
  given = flags.FLAGS
  if not rules.hands:
    refuse_given(("hands",), "only for a run with rules.hands (each "
                 "player's own dice); here --f and --e count farkles")
    return given.f, given.e
  refuse_given(("f", "e"), "count farkles in a row; under rules.hands give "
               "--hands MOVER,OPPONENT instead (e.g. 2,1)")
  return _hands(rules)


def _hands(rules) -> tuple[int, ...]:
  """--hands (default 1,2,..: player i holds hand i) as the key's fields:
  numbered from 0, one per player from the mover on."""
  n, count = rules.players, len(rules.hands)
  text = flags.FLAGS.hands or ",".join(map(str, range(1, n + 1)))
  parts = text.split(",")
  if len(parts) != n or not all(p.strip().isdigit() and
                                1 <= int(p) <= count for p in parts):
    whose = ("the mover's then the opponent's" if n == 2 else
             f"one per player from the mover on")
    raise app.UsageError(f"--hands={text}: {n} hand numbers, {whose}, "
                         f"each 1..{count}")
  return tuple(int(p) - 1 for p in parts)


def define_scores_flags() -> None:
  """--scores and --counts: a position of any number of players."""
  flags.DEFINE_string(
      "scores", None, "Every banked score in turn order from the player to "
      "move, e.g. 0,500,1200 (any number of players; instead of --b and "
      "--d, which only a two-player run takes).")
  flags.DEFINE_string(
      "counts", None, "With --scores and a penalty: every farkle count, "
      "same order (default all 0).")


def by_scores(players: int) -> bool:
  """Whether a position is given by --scores (and --counts): always with
  more than two players, with two when either flag is given (so --counts
  beside --b is refused, not ignored)."""
  given = flags.FLAGS
  return players > 2 or given["scores"].present or given["counts"].present


def seats_position(players: int, rules=None
                   ) -> tuple[list[int], list[int] | None]:
  """Reads --scores (default every player at 0) and --counts (default
  None; under `rules.hands`, --hands in their place), refusing the
  two-player flags beside them."""
  hands = rules is not None and bool(rules.hands)
  refuse_given(("b", "d", "f", "e") + (() if hands else ("hands",)), (
      f"for a two-player run; this one has {players} players: give "
      "--scores (and --counts)") if players > 2 else (
      "give either --scores (and --counts) or --b, --d, --f, --e"))
  given = flags.FLAGS
  scores = positions.parse_scores(given.scores or ",".join(["0"] * players))
  if hands:
    refuse_given(("counts",), "count farkles in a row; under rules.hands "
                 "give --hands, one per player from the mover on (e.g. "
                 "2,1)")
    return scores, list(_hands(rules))
  counts = (positions.parse_scores(given.counts, "counts")
            if given.counts else None)
  return scores, counts


def run(main: Callable[[list[str]], None],
        required: tuple[str, ...] = ()) -> None:
  """Runs an entry point's `main` the farkle_jax way (see module doc)."""
  py_logging.getLogger("jax._src.xla_bridge").addFilter(_NoTpuChatter())
  _ENTRY[0] = main.__module__
  _REQUIRED[:] = [n for n in required if flags.FLAGS[n].default is None]
  try:
    app.run(guarded(main), flags_parser=_parse)
  except SystemExit as e:
    bound_shutdown(exit_code(e), EXIT_GRACE_S)
    raise


def exit_code(e: SystemExit) -> int:
  """The exit status the interpreter gives a SystemExit."""
  return e.code if isinstance(e.code, int) else int(e.code is not None)


def bound_shutdown(code: int, grace_s: float) -> None:
  """Ends the process with `code` if the shutdown after the command's
  last line takes more than `grace_s` seconds.

  A daemon thread exits with the command's own code; should the shutdown
  hang where no Python thread runs any more, faulthandler's watchdog (no
  interpreter lock needed) ends it a little later with code 1.
  """

  def leave():
    for stream in (sys.stdout, sys.stderr):
      try:
        stream.flush()
      except (OSError, ValueError):  # a closed pipe: nothing more to say
        pass
    os._exit(code)

  timer = threading.Timer(grace_s, leave)
  timer.daemon = True
  timer.start()
  faulthandler.dump_traceback_later(3 * grace_s, exit=True,
                                    file=_devnull())


def _devnull():
  """A file for faulthandler's watchdog to write its stacks to: the
  command has already said its one line."""
  global _DEVNULL
  if _DEVNULL is None:
    _DEVNULL = open(os.devnull, "w")  # noqa: SIM115  (kept till exit)
  return _DEVNULL


_DEVNULL = None
