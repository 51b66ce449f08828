"""Strategy analysis from the command line.

    farkle analyze maxscore --config minimal
    farkle analyze memorized --config minimal
    farkle analyze evaluate --config minimal --workdir W --strategy memorized
    farkle analyze evaluate --config minimal --workdir W --versus bank:300
    farkle analyze simulate --config minimal --workdir W --games 100000
    farkle analyze goforit --config minimal --workdir W
    farkle analyze komi --config minimal --workdir runs/minimal
    farkle analyze komi --config minimal --workdir W --plot komi.png
    farkle analyze seats --config three_players --workdir W3 --scores 0,500,0
    farkle analyze seats --config three_players --workdir W3 --plot seats.png
    farkle analyze seated --config three_players --workdir W3 --games 4000
    farkle analyze distribution --config minimal --strategy bank:300
    farkle analyze distribution --config minimal --target 5000 --plot d.png
    farkle analyze distribution --config minimal --workdir W --strategy optimal
    farkle analyze convergence --workdir W
    farkle analyze convergence --workdir W --plot convergence.png
    python -m farkle_jax.apps.analyze komi --config minimal --workdir W

--strategy names the strategy evaluated (default maxscore) and --versus
its opponent (default optimal): optimal, maxscore, memorized, bank:X
(bank at turn totals of X or more) or goforit:B1,..,B6/D1,..,D6. W is
the run of the config (W3 one of three players): commands that need the
optimal strategy solve it there first (resuming; a finished run is only
loaded). Results are printed and, with a workdir, also written to
W/analysis/<command>.json; convergence prints the change of each sweep
of a solved run from its summary.json (no config, nothing written). komi,
seats and convergence also draw their figure to --plot. distribution
gives one turn's points and the turns to reach --target (default the
goal) alone, every turn by --strategy (maxscore or bank:X), exactly; with
--strategy optimal, one turn's points under the optimal play at --start
(the mover's and the opponent's banked scores).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, NamedTuple

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (enables float64 before any array)
from farkle_jax.apps import command_line, plots, progress, seat_analyses
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import checkpointing, configuration, driver, memory
from farkle_jax.solver import queries
from farkle_jax.strategy import catalog, distribution, evaluation
from farkle_jax.strategy import expected_score, figures
from farkle_jax.strategy import go_for_it, komi, memorized, simulation
from farkle_jax.strategy import seated
from farkle_jax.solver import results

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "The rules: a shipped config's name (minimal, "
    "facebook, ...; `farkle --help` lists them) or a config file.",
    lock_config=True)
_WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
_STRATEGY = flags.DEFINE_string(
    "strategy", "maxscore", f"evaluate, simulate: the strategy evaluated, "
    f"one of {catalog.NAMES}.")
_VERSUS = flags.DEFINE_string(
    "versus", "optimal", "evaluate, simulate, goforit: the opponent's "
    "strategy (same names).")
_START = flags.DEFINE_string("start", "0,0", "Banked scores of the first "
                             "and the second player, points.")
_T_LAST = flags.DEFINE_integer("t_last", 500, "maxscore: last t of V table.")
_GAMES = flags.DEFINE_integer("games", 1_000_000, "simulate: games.")
_SEED = flags.DEFINE_integer("seed", 0, "simulate: PRNG seed.")
_K_MAX = flags.DEFINE_integer("k_max", 1000, "komi: largest komi, points.")
_SCORES = flags.DEFINE_string(
    "scores", None, "seats: every player's banked score in turn order from "
    "the player to move (default: all 0).")
_GUEST = flags.DEFINE_enum("guest", "two_player", seated.GUESTS,
                           "seated: the strategy of the one other player.")
_ALLOW = flags.DEFINE_bool(
    "allow_unconverged", False, "Use a solved run that stopped at "
    "max_iterations above its tolerance.")
_TARGET = flags.DEFINE_integer(
    "target", None, "distribution: the score to reach alone, points "
    "(default the goal).")
_JSON = flags.DEFINE_bool("json", False, "distribution: print JSON "
                          "instead of the tables.")
_PLOT = flags.DEFINE_string(
    "plot", None, "komi, seats, convergence, distribution: also draw the "
    "figure to this file (.png, .pdf, .svg, ...; its directory must exist).")


class Command(NamedTuple):
  """A subcommand: whether it needs the optimal strategy, and its body
  (context -> JSON-able results, printing as it goes)."""
  needs_optimal: Callable[[], bool]
  body: Callable[[catalog.Context], dict]


def _maxscore(ctx: catalog.Context) -> dict:
  fig = figures.max_score(ctx)
  print(f"maximum expected score, rules {ctx.layout.rules.name}: "
        f"{fig.sol.points_per_turn():.4f} points per turn, "
        f"P(turn ends in a farkle) = {fig.sol.farkle_rate():.6f}")
  labels = ctx.layout.dice_labels
  gains = expected_score.format_gain_table(fig.sol, fig.reach, _T_LAST.value,
                                           labels)
  print(f"V(n, t) = T(n, t) - t ('-': unreachable)\n{gains}")
  for n in range(len(labels), 0, -1):
    first, again = fig.thresholds[n]
    print(f"n={labels[n - 1]}: bank from t={first}"
          + (f"; rolling optimal again at {again}" if again else ""))
  _print_long_run(fig, ctx.layout.rules, labels)
  return fig.as_dict()


def _print_long_run(fig: figures.MaxScore, rules: Rules,
                    labels: tuple[str, ...]) -> None:
  lr = fig.long_run
  if not rules.has_penalty:
    print("long run: no farkle penalty, so every turn is the one above")
    return
  print(f"long run, with {rules.penalty} off for {rules.penalty_count} "
        f"farkles in a row: {lr.average:.4f} points per turn (policy "
        f"iteration, {lr.iterations} rounds)")
  for f, per in enumerate(fig.long_run_thresholds):
    banks = ", ".join(f"{per[n][0]}" for n in range(len(labels), 0, -1))
    print(f"  after {f} farkle(s) in a row: a farkle is worth "
          f"{lr.farkle_points[f]:.2f} points; banks {lr.banked[f]:.4f} on "
          f"average, P(farkle) {lr.farkle_rate[f]:.6f}; bank from t = "
          f"{banks} (n = {labels[-1]}..{labels[0]})")


def _memorized(ctx: catalog.Context) -> dict:
  fig = figures.memorized_play(ctx)
  dep = fig.departures
  print(memorized.format_table(fig.table))
  print(f"table play: {dep.points_per_turn:.6f} points per turn (optimum "
        f"{dep.optimum_per_turn:.6f}, loss "
        f"{dep.optimum_per_turn - dep.points_per_turn:.3e}); farkle rate "
        f"{dep.farkle_rate:.6f}; {dep.departures_per_turn:.3e} departing "
        f"decisions per turn ({dep.bank_departures} bank/roll and "
        f"{dep.choice_departures} scoring decisions differ)")
  return fig.as_dict()


def _start() -> tuple[int, int]:
  parts = _START.value.split(",")
  try:
    start = tuple(int(v) for v in parts)
  except ValueError:
    start = ()
  if len(start) != 2:
    raise catalog.StrategyError(
        f"--start={_START.value!r}: expected two scores like 0,500")
  return start


def _usage(flag: str, value, allowed: str):
  raise configuration.ConfigError(f"--{flag}={value}: expected {allowed}")


def _check_counts() -> None:
  """The flags that bound simulations, for every command."""
  if not 2 <= _GAMES.value <= simulation.MAX_GAMES or _GAMES.value % 2:
    _usage("games", _GAMES.value, f"an even number of games from 2 to "
           f"{simulation.MAX_GAMES:,}")
  if not 0 <= _SEED.value < 2**32:
    _usage("seed", _SEED.value, f"an integer from 0 to {2**32 - 1}")


def _check_flags(rules: Rules) -> None:
  """Every flag of the command line, checked before any compute."""
  step, low = rules.step, rules.low
  for v in _start():
    if v % step or not low <= v < rules.goal:
      _usage("start", _START.value, f"two scores, multiples of {step} in "
             f"[{low}, {rules.goal - step}]")
  for flag in (_STRATEGY, _VERSUS):
    catalog.check_name(flag.value, step, rules.goal)
    if not rules.dice_alike and flag.value.startswith(SIX_DICE_STRATEGIES):
      _usage(flag.name, flag.value, "optimal, maxscore or bank:X with "
             "dice that differ (rules.dice, rules.hands)")
  if not 0 <= _K_MAX.value <= rules.goal or _K_MAX.value % step:
    _usage("k_max", _K_MAX.value, f"a score from 0 to the goal "
           f"{rules.goal}, a multiple of {step}")
  if not 0 <= _T_LAST.value <= rules.goal or _T_LAST.value % step:
    _usage("t_last", _T_LAST.value, f"a turn total from 0 to the goal "
           f"{rules.goal}, a multiple of {step}")


def _evaluate(ctx: catalog.Context) -> dict:
  t0 = time.time()
  a, b = _STRATEGY.value, _VERSUS.value
  r = figures.against(ctx, [a], b, _start())[a]
  print(f"exact: P({a} beats {b}) = {r.first:.9f} as first player, "
        f"{r.second:.9f} as second, {r.overall:.9f} overall "
        f"({time.time() - t0:.1f} s)")
  return dict(strategy=a, versus=b, first=r.first, second=r.second,
              overall=r.overall)


def _simulate(ctx: catalog.Context) -> dict:
  a = catalog.strategy(_STRATEGY.value, ctx)
  b = catalog.strategy(_VERSUS.value, ctx)
  start = _start()
  exact = evaluation.evaluate(a, b, ctx.layout, ctx.roll, start)
  t0 = time.time()
  bar = progress.CountBar("games")
  try:
    est = simulation.simulate(a, b, ctx.layout, ctx.roll, _GAMES.value,
                              _SEED.value, start, on_progress=bar)
  finally:
    bar.close()
  secs = time.time() - t0
  rows = figures.compare(est, exact)
  for c in rows:
    print(f"{c.role:8s} simulated {c.simulated:.6f} +- {c.se:.6f}  exact "
          f"{c.exact:.6f}  z = {c.z:+.2f}")
  print(f"{est.games:,} games ({a.name} vs {b.name}, seed {_SEED.value}) in "
        f"{secs:.1f} s, {est.games / secs:,.0f} games/s")
  return dict(strategy=_STRATEGY.value, versus=_VERSUS.value,
              games=est.games, seed=_SEED.value,
              seconds=secs, rows=[dict(c._asdict(), z=c.z) for c in rows])


def _goforit(ctx: catalog.Context) -> dict:
  opp = catalog.strategy(_VERSUS.value, ctx)
  res = go_for_it.search(ctx.layout, ctx.roll, ctx.sol, opp)
  r, base = res.result, res.baseline
  print(f"best go-for-it against {opp.name}: B_n (n=1..6) = {res.b_min}, "
        f"D_n = {res.d_min}\n  win rate {r.first:.6f} first, {r.second:.6f} "
        f"second, {r.overall:.6f} overall (maxscore: {base.first:.6f}, "
        f"{base.second:.6f}, {base.overall:.6f}); {res.evaluations} exact "
        f"evaluations in {res.seconds:.0f} s\n  strategy name: {res.name}")
  return dict(b_min=res.b_min, d_min=res.d_min, name=res.name,
              first=r.first, second=r.second, overall=r.overall,
              maxscore=dict(first=base.first, second=base.second,
                            overall=base.overall))


def _komi(ctx: catalog.Context) -> dict:
  curve = komi.komi(ctx.w0, ctx.layout, _K_MAX.value)
  k, w = komi.fairest(curve)
  print("    k  P(first player wins)")
  for kk, ww in curve:
    print(f"{kk:5d}  {ww:.6f}{'  <- fairest' if kk == k else ''}")
  print(f"fairest komi: {k} points (first player wins {w:.6f})")
  rules = ctx.layout.rules
  _draw(lambda: plots.komi(curve, k, f"komi, {rules.name} rules to "
                           f"{rules.goal}"))
  return dict(curve=curve, fairest=k, fairest_win=w)


def _distribution(ctx: catalog.Context) -> dict:
  rules, name = ctx.layout.rules, _STRATEGY.value
  if name == "optimal":
    first, second = _start()
    steps, turn = None, distribution.optimal(
        queries.Turns(ctx.w0, ctx.layout, ctx.roll), ctx.layout, first,
        second)
    name = f"optimal at {first},{second}"
  else:
    _, turn, steps = distribution.analyze(name, rules, _TARGET.value)
  out = distribution.as_dict(name, turn, steps)
  if _JSON.value:
    print(json.dumps(out))
    return out
  print(distribution.format_report(name, rules, turn, steps))
  _draw(lambda: plots.distribution(turn, steps, f"{name}, {rules.name} "
                                   "rules"))
  return out


def _draw(figure: Callable[[], Any]) -> None:
  """The figure that `figure` makes, to --plot when given."""
  if _PLOT.value is not None:
    plots.save(figure(), _PLOT.value)
    print(f"plot: {_PLOT.value}")


def _pair_needs_optimal() -> bool:
  return catalog.needs_optimal(_STRATEGY.value, _VERSUS.value)


# No array over the keys of the model.
PER_TURN = ("maxscore", "memorized", "distribution")
NO_FINAL_ROUND = ("evaluate", "simulate", "goforit")

COMMANDS = {
    "maxscore": Command(lambda: False, _maxscore),
    "memorized": Command(lambda: False, _memorized),
    "evaluate": Command(_pair_needs_optimal, _evaluate),
    "simulate": Command(_pair_needs_optimal, _simulate),
    "goforit": Command(lambda: catalog.needs_optimal(_VERSUS.value),
                       _goforit),
    "komi": Command(lambda: True, _komi),
    "distribution": Command(lambda: _STRATEGY.value == "optimal",
                            _distribution),
}


def _context(config, workdir: str | None, need_optimal: bool,
             per_key: bool) -> catalog.Context:
  rules, _ = configuration.check(config)
  _check_flags(rules)
  layout = StateLayout(rules)
  if per_key:
    memory.check_arrays(memory.analysis_bytes(layout),
                        "the per-key arrays of this analysis")
  if not need_optimal:
    return catalog.Context(layout, roll_tables.build(rules))
  if not workdir:
    raise catalog.StrategyError("the optimal strategy needs --workdir")
  # A display only shows once a solve is needed.
  with progress.for_solve(verbose=flags.FLAGS.verbose) as display:
    run = driver.ensure(config, workdir, _ALLOW.value, on_chunk=display)
  return catalog.Context(run.layout, run.roll, run.w0)


def _save(workdir: str, name: str, out: dict) -> None:
  if name in ("evaluate", "simulate"):
    name += "_" + "_vs_".join(
        v.replace(":", "").replace("/", "_").replace(",", "-")
        for v in (_STRATEGY.value, _VERSUS.value))
  path = os.path.join(workdir, "analysis")
  os.makedirs(path, exist_ok=True)
  with open(os.path.join(path, f"{name}.json"), "w") as f:
    json.dump(out, f, indent=1, default=str)


def _seats(config, workdir) -> dict:
  game = seat_analyses.solved(config, workdir, _ALLOW.value)
  out = seat_analyses.seats_report(game, _SCORES.value)
  bars = {"from the opening": game.summary["seat_win"]}
  if any(out["scores"]):
    bars[f"at scores {','.join(map(str, out['scores']))}"] = out["win"]
  _draw(lambda: plots.seat_wins(bars, f"{game.players} players, "
                                f"{game.rules.name} rules to "
                                f"{game.rules.goal}"))
  return out


def _seated(config, workdir) -> dict:
  game = seat_analyses.solved(config, workdir, _ALLOW.value)
  return seat_analyses.seated_report(game, config, workdir, _GUEST.value,
                                     _GAMES.value, _SEED.value)


SEAT_COMMANDS = {"seats": _seats, "seated": _seated}


# What works with dice that differ (rules.dice) or hands (rules.hands).
DICE_COMMANDS = {"maxscore": "each hand", "komi": "any dice", "seats":
                 "a hand all share", "evaluate": "optimal, maxscore, bank:X",
                 "simulate": "optimal, maxscore, bank:X",
                 "distribution": "optimal, maxscore, bank:X"}
# Strategies whose tables speak of n = 1..6 dice.
SIX_DICE_STRATEGIES = ("memorized", "goforit:")


def _check_dice(name: str) -> None:
  rules = configuration.check(_CONFIG.value)[0]
  if rules.dice_alike:
    return
  if name not in DICE_COMMANDS:
    said = "; ".join(f"{k}: {v}" for k, v in DICE_COMMANDS.items())
    raise configuration.ConfigError(
        f"{name}: not yet for dice that differ or hands of their own "
        f"(rules.dice, rules.hands); what works: {said}")


# The commands with a figure.
PLOTTED = ("komi", "seats", "convergence", "distribution")


def _command(argv: list[str]) -> str:
  """The command asked for, after the checks that every command makes
  before any work: the flags it needs, and that --plot can be written."""
  names = [*COMMANDS, *SEAT_COMMANDS, "convergence"]
  if len(argv) != 2 or argv[1] not in names:
    got = f" (not {' '.join(argv[1:])!r})" if argv[1:] else ""
    raise app.UsageError(f"give one command: {' | '.join(names)}{got}")
  name = argv[1]
  if _PLOT.value is not None and name not in PLOTTED:
    raise app.UsageError(f"--plot: {name} draws no figure; "
                         f"{', '.join(PLOTTED)} do")
  if _JSON.value and name != "distribution":
    raise app.UsageError(f"--json: for distribution, not {name}")
  if name == "convergence" and not _WORKDIR.value:
    raise app.UsageError("convergence needs --workdir (a solved run)")
  if name != "convergence" and _CONFIG.value is None:
    raise app.UsageError(f"{name} needs --config (the rules, as for a "
                         "solve)")
  plots.check_path(_PLOT.value)
  return name


def main(argv):
  name = _command(argv)
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  _check_counts()
  if name == "convergence":   # what summary.json holds: nothing to save
    _convergence(_WORKDIR.value)
    return
  players = _CONFIG.value.rules.get("players", 2)
  if name in SEAT_COMMANDS and players == 2:
    raise configuration.ConfigError(
        f"{name}: for more than two players (rules.players = 2); with two, "
        f"use {' | '.join(COMMANDS)}")
  if name not in SEAT_COMMANDS and players > 2:
    raise configuration.ConfigError(
        f"{name}: for exactly two players (rules.players = {players}); "
        "with more, use seats or seated")
  _check_dice(name)
  if name == "distribution":
    rules = configuration.check(_CONFIG.value)[0]
    distribution.check_strategy(_STRATEGY.value, rules)
    distribution.check_target(
        rules.goal if _TARGET.value is None else _TARGET.value, rules)
    if _STRATEGY.value == "optimal" and rules.final_round:
      raise configuration.ConfigError(
          "distribution: the optimal play's turn with rules.final_round = "
          "True is not given (the chaser plays on past the goal)")
    if _STRATEGY.value == "optimal" and _TARGET.value is not None:
      raise app.UsageError("--target: the turns to a target are for a "
                           "fixed policy (maxscore, bank:X), not optimal")
  if name in SEAT_COMMANDS:
    if name == "seated" and _GAMES.value > seated.MAX_GAMES:
      _usage("games", _GAMES.value, f"at most {seated.MAX_GAMES:,} for "
             "seated (a game at a time)")
    if name == "seated" and _CONFIG.value.rules.penalty:
      raise configuration.ConfigError(
          "seated: rules without a farkle penalty only (rules.penalty = 0)")
    if name == "seated" and _CONFIG.value.rules.final_round:
      raise configuration.ConfigError(
          "seated: rules without a final round only (rules.final_round = "
          "False): its guests' last turns are not evaluated")
    out = {"command": name, **SEAT_COMMANDS[name](_CONFIG.value,
                                                 _WORKDIR.value)}
    _save(_WORKDIR.value, name, out)
    return
  command = COMMANDS[name]
  if name in NO_FINAL_ROUND and _CONFIG.value.rules.final_round:
    raise configuration.ConfigError(
        f"{name}: strategies are not yet evaluated or simulated with "
        "rules.final_round = True (the chaser's last turn); maxscore, "
        "memorized and komi work")
  out = {"command": name, **_run(name, command)}
  if _WORKDIR.value:
    _save(_WORKDIR.value, name, out)


def _convergence(workdir: str) -> None:
  """The max change of every sweep of the solved run in `workdir`, from
  its summary.json."""
  summary = results.read_summary(workdir)
  if summary is None:
    raise results.ResultsError(f"--workdir={workdir}: no solved run there "
                               "(no summary.json)")
  sweeps, changes = plots.sweeps(summary)
  print(f"{summary['method']}, {summary['model_states']:,} states: "
        f"{'converged' if summary['converged'] else 'NOT converged'} after "
        f"{summary['iterations']} sweeps ({summary['norm']} max change, "
        f"tolerance {summary['tol']:.1e})")
  print("sweep  max change")
  for i, change in zip(sweeps, changes):
    print(f"{i:5d}  {change:.3e}")
  _draw(lambda: plots.convergence(summary, workdir))


def _run(name: str, command: Command) -> dict:
  """The command's results; `maxscore` under rules.hands: one turn of
  each player's hand, one after the other."""
  config = _CONFIG.value
  hands = config.rules.get("hands", ())
  if name != "maxscore" or not hands:
    return command.body(_context(config, _WORKDIR.value,
                                 command.needs_optimal(),
                                 per_key=name not in PER_TURN))
  out = []
  for i, hand in enumerate(hands, start=1):
    one = config.copy_and_resolve_references()
    one.rules.hands, one.rules.dice = (), hand
    print(f"player {i}'s hand:")
    out.append(command.body(_context(one, None, False, per_key=False)))
  return {"hands": out}


def cli() -> None:
  """The command (`farkle analyze`)."""
  # --config is checked by `main`: `convergence` has none, and a command
  # line without a command is told the commands first.
  command_line.run(main)


if __name__ == "__main__":
  cli()
