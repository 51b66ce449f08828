"""Strategy analysis from the command line.

  python -m farkle_jax.analyze maxscore --config configs/minimal.py
  python -m farkle_jax.analyze memorize --config configs/minimal.py
  python -m farkle_jax.analyze evaluate --config configs/minimal.py \
      --workdir runs/minimal --a maxscore --b optimal
  python -m farkle_jax.analyze simulate --config configs/minimal.py \
      --workdir runs/minimal --a maxscore --b optimal --games 1000000
  python -m farkle_jax.analyze goforit --config configs/minimal.py \
      --workdir runs/minimal
  python -m farkle_jax.analyze komi --config configs/minimal.py \
      --workdir runs/minimal

Commands that need the optimal strategy solve the config in --workdir first
(resuming; a finished run is only loaded). Results are printed and, with a
workdir, also written to workdir/analysis/<command>.json.
"""

import json
import os
import time

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (enables float64 before any array)
from farkle_jax import analysis, checkpointing, configuration, evaluation
from farkle_jax import expected_score, memorable, simulation, solve
from farkle_jax import tables as tables_lib
from farkle_jax.layout import StateLayout

COMMANDS = ("maxscore", "memorize", "evaluate", "simulate", "goforit", "komi")

_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "Config file of the rules, e.g. configs/minimal.py.",
    lock_config=True)
_WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
_A = flags.DEFINE_string("a", "maxscore", f"Strategy A: {analysis.NAMES}.")
_B = flags.DEFINE_string("b", "optimal", "Strategy B (same names).")
_START = flags.DEFINE_string("start", "0,0", "Banked scores of the first "
                             "and the second player, points.")
_T_LAST = flags.DEFINE_integer("t_last", 500, "maxscore: last t of V table.")
_GAMES = flags.DEFINE_integer("games", 1_000_000, "simulate: games.")
_SEED = flags.DEFINE_integer("seed", 0, "simulate: PRNG seed.")
_K_MAX = flags.DEFINE_integer("k_max", 1000, "komi: largest komi, points.")


def _context(config, workdir, need_optimal):
  rules, _ = configuration.check(config)
  if not need_optimal:
    return analysis.Context(StateLayout(rules), tables_lib.build(rules))
  if not workdir:
    raise analysis.StrategyError("the optimal strategy needs --workdir")
  w0, layout, roll, _ = solve.ensure(config, workdir)
  return analysis.Context(layout, roll, w0)


def _maxscore(ctx, out):
  sol = ctx.sol
  reach = expected_score.reachable(ctx.roll, sol.cap + 1)
  print(f"maximum expected score, rules {ctx.layout.rules.name}: "
        f"{sol.points_per_turn():.4f} points per turn, "
        f"P(turn ends in a farkle) = {sol.farkle_rate():.6f}")
  print(f"V(n, t) = T(n, t) - t ('-': unreachable)\n"
        f"{expected_score.format_gain_table(sol, reach, _T_LAST.value)}")
  th = expected_score.thresholds(sol, reach)
  for n in range(6, 0, -1):
    first, again = th[n]
    print(f"n={n}: bank from t={first}"
          + (f"; rolling optimal again at {again}" if again else ""))
  out.update(points_per_turn=sol.points_per_turn(),
             farkle_rate=sol.farkle_rate(),
             thresholds={n: {"bank_from": th[n][0], "roll_again": th[n][1]}
                         for n in th})


def _memorize(ctx, out):
  table = ctx.table()
  dep = memorable.departures(ctx.sol, table, ctx.roll)
  print(memorable.format_table(table))
  print(f"table play: {dep.points_per_turn:.6f} points per turn (optimum "
        f"{dep.optimum_per_turn:.6f}, loss "
        f"{dep.optimum_per_turn - dep.points_per_turn:.3e}); farkle rate "
        f"{dep.farkle_rate:.6f}; {dep.departures_per_turn:.3e} departing "
        f"decisions per turn ({dep.bank_departures} bank/roll and "
        f"{dep.choice_departures} scoring decisions differ)")
  out.update(table={n + 1: p for n, p in enumerate(table.points)},
             **dep._asdict())


def _start():
  try:
    s = tuple(int(v) for v in _START.value.split(","))
    assert len(s) == 2
  except (ValueError, AssertionError):
    raise analysis.StrategyError(
        f"--start={_START.value!r}: expected two scores like 0,500") from None
  return s


def _evaluate(ctx, out):
  a, b = analysis.strategy(_A.value, ctx), analysis.strategy(_B.value, ctx)
  t0 = time.time()
  r = evaluation.evaluate(a, b, ctx.layout, ctx.roll, _start())
  print(f"exact: P({a.name} beats {b.name}) = {r.first:.9f} as first player, "
        f"{r.second:.9f} as second, {r.overall:.9f} overall "
        f"({time.time() - t0:.1f} s)")
  out.update(a=_A.value, b=_B.value, first=r.first, second=r.second,
             overall=r.overall)


def _simulate(ctx, out):
  a, b = analysis.strategy(_A.value, ctx), analysis.strategy(_B.value, ctx)
  start = _start()
  exact = evaluation.evaluate(a, b, ctx.layout, ctx.roll, start)
  t0 = time.time()
  e = simulation.simulate(a, b, ctx.layout, ctx.roll, _GAMES.value,
                          _SEED.value, start)
  secs = time.time() - t0
  rows = []
  for label, x, se, ex in (("first", e.first, e.first_se, exact.first),
                           ("second", e.second, e.second_se, exact.second),
                           ("overall", e.overall, e.overall_se,
                            exact.overall)):
    z = (x - ex) / se
    rows.append(dict(role=label, simulated=x, se=se, exact=ex, z=z))
    print(f"{label:8s} simulated {x:.6f} +- {se:.6f}  exact {ex:.6f}  "
          f"z = {z:+.2f}")
  print(f"{e.games:,} games ({a.name} vs {b.name}, seed {_SEED.value}) in "
        f"{secs:.1f} s, {e.games / secs:,.0f} games/s")
  out.update(a=_A.value, b=_B.value, games=e.games, seed=_SEED.value,
             seconds=secs, rows=rows)


def _goforit(ctx, out):
  opt = analysis.strategy(_B.value, ctx)
  res = analysis.search_go_for_it(ctx, opt)
  r, base = res.result, res.baseline
  print(f"best go-for-it against {opt.name}: B_n (n=1..6) = {res.b_min}, "
        f"D_n = {res.d_min}\n  win rate {r.first:.6f} first, {r.second:.6f} "
        f"second, {r.overall:.6f} overall (maxscore: {base.first:.6f}, "
        f"{base.second:.6f}, {base.overall:.6f}); {res.evaluations} exact "
        f"evaluations in {res.seconds:.0f} s\n  strategy name: {res.name}")
  out.update(b_min=res.b_min, d_min=res.d_min, name=res.name,
             first=r.first, second=r.second, overall=r.overall,
             maxscore=dict(first=base.first, second=base.second,
                           overall=base.overall))


def _komi(ctx, out):
  curve = analysis.komi(ctx.w0, ctx.layout, _K_MAX.value)
  k, w = analysis.fairest(curve)
  print("    k  P(first player wins)")
  for kk, ww in curve:
    print(f"{kk:5d}  {ww:.6f}{'  <- fairest' if kk == k else ''}")
  print(f"fairest komi: {k} points (first player wins {w:.6f})")
  out.update(curve=curve, fairest=k, fairest_win=w)


def main(argv):
  if len(argv) != 2 or argv[1] not in COMMANDS:
    raise app.UsageError(f"give one command: {' | '.join(COMMANDS)}")
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  cmd = argv[1]
  need = cmd in ("komi", "goforit") or (
      cmd in ("evaluate", "simulate") and "optimal" in (_A.value, _B.value))
  out = {"command": cmd}
  try:
    ctx = _context(_CONFIG.value, _WORKDIR.value, need)
    globals()["_" + cmd](ctx, out)
  except (configuration.ConfigError, solve.MemoryRefused,
          checkpointing.CheckpointMismatch, analysis.StrategyError) as e:
    raise SystemExit(f"error: {e}") from None
  if _WORKDIR.value:
    path = os.path.join(_WORKDIR.value, "analysis")
    os.makedirs(path, exist_ok=True)
    name = cmd
    if cmd in ("evaluate", "simulate"):
      name += "_" + "_vs_".join(
          v.replace(":", "").replace("/", "_").replace(",", "-")
          for v in (_A.value, _B.value))
    with open(os.path.join(path, f"{name}.json"), "w") as f:
      json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
  flags.mark_flags_as_required(["config"])
  app.run(main)
