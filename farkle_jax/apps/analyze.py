"""Strategy analysis from the command line.

  python -m farkle_jax.apps.analyze maxscore --config configs/minimal.py
  python -m farkle_jax.apps.analyze memorized --config configs/minimal.py
  python -m farkle_jax.apps.analyze evaluate --config configs/minimal.py \
      --workdir runs/minimal --a maxscore --b optimal
  python -m farkle_jax.apps.analyze simulate --config configs/minimal.py \
      --workdir runs/minimal --a maxscore --b optimal --games 1000000
  python -m farkle_jax.apps.analyze goforit --config configs/minimal.py \
      --workdir runs/minimal
  python -m farkle_jax.apps.analyze komi --config configs/minimal.py \
      --workdir runs/minimal
  python -m farkle_jax.apps.analyze seats --config configs/three_players.py \
      --workdir runs/three_players --scores 0,500,1200
  python -m farkle_jax.apps.analyze seated --config configs/three_players.py \
      --config.rules.goal=2000 --workdir runs/three_2000 --games 4000

Commands that need the optimal strategy solve the config in --workdir first
(resuming; a finished run is only loaded). Results are printed and, with a
workdir, also written to workdir/analysis/<command>.json.
"""

from __future__ import annotations

import json
import os
import time
from typing import Callable, NamedTuple

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (enables float64 before any array)
from farkle_jax.apps import command_line, progress
from farkle_jax.game import roll_tables
from farkle_jax.game.layout import StateLayout
from farkle_jax.game.rules import Rules
from farkle_jax.solver import checkpointing, configuration, driver, memory
from farkle_jax.strategy import catalog, evaluation, expected_score, figures
from farkle_jax.strategy import go_for_it, komi, memorized, simulation
from farkle_jax.strategy import positions, seat_game, seated
from farkle_jax.solver import results, stage_engine

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "Config file of the rules, e.g. configs/minimal.py.",
    lock_config=True)
_WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
_A = flags.DEFINE_string("a", "maxscore", f"Strategy A: {catalog.NAMES}.")
_B = flags.DEFINE_string("b", "optimal", "Strategy B (same names).")
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
  print(f"V(n, t) = T(n, t) - t ('-': unreachable)\n"
        f"{expected_score.format_gain_table(fig.sol, fig.reach, _T_LAST.value, ctx.layout.dice_labels)}")
  labels = ctx.layout.dice_labels
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
  for name in (_A.value, _B.value):
    catalog.check_name(name, step, rules.goal)
    if not rules.dice_alike and name.startswith(SIX_DICE_STRATEGIES):
      _usage("a" if name == _A.value else "b", name, "optimal, maxscore or "
             "bank:X with dice that differ (rules.dice, rules.hands)")
  if not 0 <= _K_MAX.value <= rules.goal or _K_MAX.value % step:
    _usage("k_max", _K_MAX.value, f"a score from 0 to the goal "
           f"{rules.goal}, a multiple of {step}")
  if not 0 <= _T_LAST.value <= rules.goal or _T_LAST.value % step:
    _usage("t_last", _T_LAST.value, f"a turn total from 0 to the goal "
           f"{rules.goal}, a multiple of {step}")


def _evaluate(ctx: catalog.Context) -> dict:
  t0 = time.time()
  r = figures.against(ctx, [_A.value], _B.value, _start())[_A.value]
  print(f"exact: P({_A.value} beats {_B.value}) = {r.first:.9f} as first "
        f"player, {r.second:.9f} as second, {r.overall:.9f} overall "
        f"({time.time() - t0:.1f} s)")
  return dict(a=_A.value, b=_B.value, first=r.first, second=r.second,
              overall=r.overall)


def _simulate(ctx: catalog.Context) -> dict:
  a, b = catalog.strategy(_A.value, ctx), catalog.strategy(_B.value, ctx)
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
  return dict(a=_A.value, b=_B.value, games=est.games, seed=_SEED.value,
              seconds=secs, rows=[dict(c._asdict(), z=c.z) for c in rows])


def _goforit(ctx: catalog.Context) -> dict:
  opp = catalog.strategy(_B.value, ctx)
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
  return dict(curve=curve, fairest=k, fairest_win=w)


def _pair_needs_optimal() -> bool:
  return catalog.needs_optimal(_A.value, _B.value)


PER_TURN = ("maxscore", "memorized")  # no array over the keys of the model
NO_FINAL_ROUND = ("evaluate", "simulate", "goforit")

COMMANDS = {
    "maxscore": Command(lambda: False, _maxscore),
    "memorized": Command(lambda: False, _memorized),
    "evaluate": Command(_pair_needs_optimal, _evaluate),
    "simulate": Command(_pair_needs_optimal, _simulate),
    "goforit": Command(lambda: catalog.needs_optimal(_B.value), _goforit),
    "komi": Command(lambda: True, _komi),
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
  run = driver.ensure(config, workdir, _ALLOW.value)
  return catalog.Context(run.layout, run.roll, run.w0)


def _save(workdir: str, name: str, out: dict) -> None:
  if name in ("evaluate", "simulate"):
    name += "_" + "_vs_".join(
        v.replace(":", "").replace("/", "_").replace(",", "-")
        for v in (_A.value, _B.value))
  path = os.path.join(workdir, "analysis")
  os.makedirs(path, exist_ok=True)
  with open(os.path.join(path, f"{name}.json"), "w") as f:
    json.dump(out, f, indent=1, default=str)


def _seat_game(config, workdir: str | None) -> seat_game.SeatGame:
  """The solved N-player run of the config in `workdir` (solved first,
  resuming, unless it holds the finished run)."""
  if not workdir:
    raise configuration.ConfigError("seats and seated need --workdir (the "
                                    "solved run, or where to solve it)")
  seats, _ = stage_engine.check(config)
  try:
    game = seat_game.SeatGame.load(workdir, _ALLOW.value)
    if game.rules == seats.rules:
      return game
  except results.ResultsError:   # none there yet, or another one
    pass
  try:
    driver.run(config, workdir)
  except driver.NotConverged:
    if not _ALLOW.value:
      raise
  return seat_game.SeatGame.load(workdir, _ALLOW.value)


def _seats(config, workdir) -> dict:
  game = _seat_game(config, workdir)
  n = game.seats.players
  scores = positions.parse_scores(_SCORES.value or ",".join(["0"] * n))
  win = game.win_probabilities(scores)
  banks = game.bank_thresholds(scores)
  print(stage_engine.seat_table(game.summary))
  print(f"at scores {','.join(map(str, scores))} (player to move first): "
        f"win probabilities {seat_game.format_vector(win)}")
  print("bank from turn total, n = 6..1 dice: "
        + ", ".join("never" if b is None else str(b) for b in banks))
  return dict(scores=scores, win=win.tolist(), bank_from=banks)


def _seated(config, workdir) -> dict:
  game = _seat_game(config, workdir)
  guest, pair, play = _GUEST.value, None, None
  if guest == "two_player":
    pair_config = config.copy_and_resolve_references()
    pair_config.rules.players = 2
    pair = results.load(_pair_workdir(pair_config, workdir)).w0
    play = seated.pair_turns(game.rules, pair)
  elif guest == "max_score":
    play = seated.max_score_table(game.seats)
  exact = seated.evaluate(game.seats, game.w0, pair, guest)
  opening = (game.seats.index_of(0),) * game.seats.players + (
      0,) * game.seats.players
  rows = []
  for seat in range(game.seats.players):
    ex, opt = exact[seat][opening][seat], game.w0[opening][seat]
    bar = progress.CountBar(f"games, seat {seat + 1}")
    try:
      wins = seated.simulate(game, play, seat, _GAMES.value,
                             _SEED.value + seat, on_progress=bar)
    finally:
      bar.close()
    p, se = simulation.win_rate(int(wins[seat]), _GAMES.value)
    print(f"seat {seat + 1}: {guest} wins {ex:.6f} exact, optimal "
          f"{opt:.6f} (loss {opt - ex:+.6f}); {_GAMES.value:,} games "
          f"{p:.6f} +- {se:.6f}, z = {(p - ex) / se:+.2f}")
    rows.append(dict(seat=seat + 1, exact=ex, optimal=opt, simulated=p,
                     se=se))
  return dict(guest=guest, games=_GAMES.value, rows=rows)


def _pair_workdir(config, workdir: str) -> str:
  """Solves (or loads) the two-player game of the same rules."""
  where = os.path.join(workdir, "two_players")
  driver.ensure(config, where)
  return where


SEAT_COMMANDS = {"seats": _seats, "seated": _seated}


# What works with dice that differ (rules.dice) or hands (rules.hands).
DICE_COMMANDS = {"maxscore": "each hand", "komi": "any dice",
                 "evaluate": "optimal, maxscore, bank:X",
                 "simulate": "optimal, maxscore, bank:X"}
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


def main(argv):
  names = list(COMMANDS) + list(SEAT_COMMANDS)
  if len(argv) != 2 or argv[1] not in names:
    raise app.UsageError(f"give one command: {' | '.join(names)}")
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  _check_counts()
  name, players = argv[1], _CONFIG.value.rules.get("players", 2)
  if name in SEAT_COMMANDS and players == 2:
    raise configuration.ConfigError(
        f"{name}: for more than two players (rules.players = 2); with two, "
        f"use {' | '.join(COMMANDS)}")
  if name not in SEAT_COMMANDS and players > 2:
    raise configuration.ConfigError(
        f"{name}: for exactly two players (rules.players = {players}); "
        "with more, use seats or seated")
  _check_dice(name)
  if name in SEAT_COMMANDS:
    if name == "seated" and _GAMES.value > seated.MAX_GAMES:
      _usage("games", _GAMES.value, f"at most {seated.MAX_GAMES:,} for "
             "seated (a game at a time)")
    if name == "seated" and _CONFIG.value.rules.penalty:
      raise configuration.ConfigError(
          "seated: rules without a farkle penalty only (rules.penalty = 0)")
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


if __name__ == "__main__":
  command_line.run(main, required=("config",))
