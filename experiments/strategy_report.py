"""All strategy figures of a rule set in one run: a markdown + JSON report.

  python experiments/strategy_report.py --config configs/minimal.py \
      --workdir runs/minimal --games 1000000

Solves the config in --workdir first (resuming; a finished run is loaded),
then: maximum expected score (points per turn, farkle rate, V table,
thresholds), the memorized table and its departures, exact win rates of
every strategy against the optimal player, the go-for-it search, the komi
curve, and Monte Carlo play of every pairing against its exact value. The
figures are those of `python -m farkle_jax.apps.analyze` (the same functions of
`farkle_jax.strategy.figures`, `go_for_it` and `komi`), formatted as one
report. Writes workdir/analysis/strategy_report.{md,json}.
"""

import os
import time

from absl import flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
import outputs
from farkle_jax.solver import checkpointing, driver
from farkle_jax.strategy import catalog, expected_score, figures, go_for_it
from farkle_jax.strategy import komi, memorized, simulation

_CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
_GAMES = flags.DEFINE_integer("games", 1_000_000, "Games per simulation "
                              "(0: no simulation).")
_BANK_AT = flags.DEFINE_list("bank_at", ["300", "500", "1000"],
                             "Thresholds X of the bank:X strategies.")
_SEARCH = flags.DEFINE_bool("search", True, "Run the go-for-it search.")


def max_score_section(ctx: catalog.Context, rep: dict) -> list[str]:
  fig = figures.max_score(ctx)
  sol, th = fig.sol, fig.thresholds
  rep["maxscore"] = fig.as_dict()
  return ["## Maximum expected score", "",
          f"{sol.points_per_turn():.4f} points per turn; a turn ends in a "
          f"farkle with probability {sol.farkle_rate():.6f}.", "",
          "V(n, t) = T(n, t) - t, '-' unreachable:", "", "```",
          expected_score.format_gain_table(sol, fig.reach, 500), "```", "",
          "Bank thresholds (smallest reachable t where banking is optimal): "
          + ", ".join(f"n={n}: {th[n][0]}" for n in range(6, 0, -1))
          + "; rolling optimal again above them: "
          + (", ".join(f"n={n}: {th[n][1]}" for n in th if th[n][1])
             or "never") + ".", ""]


def memorized_section(ctx: catalog.Context, rep: dict) -> list[str]:
  fig = figures.memorized_play(ctx)
  dep = fig.departures
  rep["memorized"] = fig.as_dict()
  return ["## Memorized table", "", "```", memorized.format_table(fig.table),
          "```", "", f"Table play: {dep.points_per_turn:.6f} points per turn "
          f"(optimum {dep.optimum_per_turn:.6f}); "
          f"{dep.departures_per_turn:.3e} departing decisions per turn "
          f"({dep.bank_departures} bank/roll and {dep.choice_departures} "
          "scoring decisions among reachable states differ).", ""]


def go_for_it_section(ctx: catalog.Context, opt, rep: dict
                      ) -> tuple[list[str], str]:
  """The go-for-it search against the optimal player: (lines, the name of
  the best go-for-it strategy)."""
  res = go_for_it.search(ctx.layout, ctx.roll, ctx.sol, opt)
  rep["goforit"] = dict(b_min=res.b_min, d_min=res.d_min, name=res.name,
                        evaluations=res.evaluations, seconds=res.seconds)
  return ["## Go for it", "",
          f"Best B_n (n = 1..6) = {res.b_min}, D_n = {res.d_min} "
          f"({res.evaluations} exact evaluations, {res.seconds:.0f} s).",
          ""], res.name


def exact_section(exact: dict, rep: dict) -> list[str]:
  rep["exact"] = {s: dict(first=r.first, second=r.second, overall=r.overall)
                  for s, r in exact.items()}
  return (["## Exact win rates against the optimal player", "",
           "| strategy | first | second | overall |", "|---|---|---|---|"]
          + [f"| {s} | {r.first:.6f} | {r.second:.6f} | {r.overall:.6f} |"
             for s, r in exact.items()] + [""])


def komi_section(ctx: catalog.Context, rep: dict) -> list[str]:
  curve = komi.komi(ctx.w0, ctx.layout, 1000)
  k, w = komi.fairest(curve)
  rep["komi"] = dict(curve=curve, fairest=k, fairest_win=w)
  return (["## Komi (both optimal)", "", "| k | P(first player wins) |",
           "|---|---|"] + [f"| {kk} | {ww:.6f} |" for kk, ww in curve]
          + ["", f"Fairest komi: {k} points (first player wins {w:.6f}).",
             ""])


def simulation_section(ctx: catalog.Context, opt, exact: dict, rep: dict
                       ) -> list[str]:
  """Monte Carlo play of every strategy against the optimal player, beside
  its exact value (seed = row number)."""
  layout, games = ctx.layout, _GAMES.value
  md = ["## Monte Carlo against the exact values", "",
        f"{games:,} games per pairing (half with each player first), seed = "
        "row number.", "",
        "| A vs optimal | simulated first | exact | z | simulated second "
        "| exact | z | seconds |", "|---|---|---|---|---|---|---|---|"]
  dense_opt = simulation.dense(opt, layout)
  rep["simulation"] = {}
  for seed, s in enumerate(exact):
    t0 = time.time()
    a = dense_opt if s == "optimal" else catalog.strategy(s, ctx)
    est = simulation.simulate(a, dense_opt, layout, ctx.roll, games, seed)
    first, second, _ = figures.compare(est, exact[s])
    secs = time.time() - t0
    rep["simulation"][s] = dict(
        first=first.simulated, first_se=first.se, second=second.simulated,
        second_se=second.se, z_first=first.z, z_second=second.z,
        seconds=secs)
    md.append(f"| {s} | {first.simulated:.6f} ± {first.se:.6f} | "
              f"{first.exact:.6f} | {first.z:+.2f} | "
              f"{second.simulated:.6f} ± {second.se:.6f} | "
              f"{second.exact:.6f} | {second.z:+.2f} | {secs:.0f} |")
    logging.info("simulated %s: z = %+.2f, %+.2f (%.0f s)", s, first.z,
                 second.z, secs)
  w0_start = float(ctx.w0[layout.opening_key()])
  return md + ["", f"Solver W0 at the start: {w0_start:.9f}.", ""]


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  workdir = _WORKDIR.value
  start = time.time()
  run = driver.ensure(_CONFIG.value, workdir)
  ctx = catalog.Context(run.layout, run.roll, run.w0)
  rules = run.layout.rules
  md = [f"# Strategy report: rules `{rules.name}` (goal {rules.goal})", "",
        f"Command: {outputs.command_line()}", ""]
  rep = {"rules": rules.to_dict()}
  md += max_score_section(ctx, rep)
  md += memorized_section(ctx, rep)
  opt = catalog.strategy("optimal", ctx)
  names = ["optimal", "maxscore", "memorized"] + [f"bank:{x}" for x in
                                                  _BANK_AT.value]
  if _SEARCH.value:
    lines, best = go_for_it_section(ctx, opt, rep)
    md += lines
    names.append(best)
  exact = figures.against(ctx, names, "optimal")
  md += exact_section(exact, rep)
  md += komi_section(ctx, rep)
  if _GAMES.value:
    md += simulation_section(ctx, opt, exact, rep)
  md.append(f"Total time {time.time() - start:.0f} s.")
  path = os.path.join(workdir, "analysis")
  os.makedirs(path, exist_ok=True)
  outputs.write_json(os.path.join(path, "strategy_report.json"), rep)
  outputs.write_report(os.path.join(path, "strategy_report.md"), md)


if __name__ == "__main__":
  command_line.run(main, required=("config", "workdir"))
