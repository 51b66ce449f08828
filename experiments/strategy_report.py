"""All strategy figures of a rule set in one run: a markdown + JSON report.

  python experiments/strategy_report.py --config configs/minimal.py \
      --workdir runs/minimal --games 1000000

Solves the config in --workdir first (resuming; a finished run is loaded),
then: maximum expected score (points per turn, farkle rate, V table,
thresholds), the memorizable table and its departures, exact win rates of
every strategy against the optimal player, the go-for-it search, the komi
curve, and Monte Carlo play of every pairing against its exact value.
Writes workdir/analysis/strategy_report.{md,json}.
"""

import json
import os
import sys
import time

from absl import app, flags, logging
from ml_collections import config_flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import farkle_jax  # noqa: E402,F401
import outputs  # noqa: E402
from farkle_jax import analysis, checkpointing, configuration  # noqa: E402
from farkle_jax import evaluation, expected_score, memorable  # noqa: E402
from farkle_jax import simulation, solve  # noqa: E402

_CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Solved (or to solve) run.")
_GAMES = flags.DEFINE_integer("games", 1_000_000, "Games per simulation "
                              "(0: no simulation).")
_BANK_AT = flags.DEFINE_list("bank_at", ["300", "500", "1000"],
                             "Thresholds X of the bank:X strategies.")
_SEARCH = flags.DEFINE_bool("search", True, "Run the go-for-it search.")


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  config, workdir = _CONFIG.value, _WORKDIR.value
  configuration.check(config)
  start = time.time()
  w0, layout, roll, _ = solve.ensure(config, workdir)
  ctx = analysis.Context(layout, roll, w0)
  name = layout.rules.name
  md = [f"# Strategy report: rules `{name}` (goal {layout.rules.goal})", "",
        f"Command: {outputs.command_line()}", ""]
  rep = {"rules": layout.rules.to_dict()}

  sol = ctx.sol
  reach = expected_score.reachable(roll, sol.cap + 1)
  th = expected_score.thresholds(sol, reach)
  rep["maxscore"] = dict(points_per_turn=sol.points_per_turn(),
                         farkle_rate=sol.farkle_rate(),
                         bank_from={n: th[n][0] for n in th},
                         roll_again={n: th[n][1] for n in th})
  md += ["## Maximum expected score", "",
         f"{sol.points_per_turn():.4f} points per turn; a turn ends in a "
         f"farkle with probability {sol.farkle_rate():.6f}.", "",
         "V(n, t) = T(n, t) - t, '-' unreachable:", "", "```",
         expected_score.format_gain_table(sol, reach, 500), "```", "",
         "Bank thresholds (smallest reachable t where banking is optimal): "
         + ", ".join(f"n={n}: {th[n][0]}" for n in range(6, 0, -1))
         + "; rolling optimal again above them: "
         + (", ".join(f"n={n}: {th[n][1]}" for n in th if th[n][1])
            or "never") + ".", ""]

  table = ctx.table()
  dep = memorable.departures(sol, table, roll)
  rep["memorized"] = dict(table={n + 1: p for n, p in
                                 enumerate(table.points)}, **dep._asdict())
  md += ["## Memorizable table", "", "```", memorable.format_table(table),
         "```", "", f"Table play: {dep.points_per_turn:.6f} points per turn "
         f"(optimum {dep.optimum_per_turn:.6f}); {dep.departures_per_turn:.3e}"
         f" departing decisions per turn ({dep.bank_departures} bank/roll and "
         f"{dep.choice_departures} scoring decisions among reachable states "
         "differ).", ""]

  opt = analysis.strategy("optimal", ctx)
  out_opt = evaluation.turn_outcomes(opt, layout, roll)
  names = ["optimal", "maxscore", "memorized"] + [f"bank:{x}" for x in
                                                  _BANK_AT.value]
  if _SEARCH.value:
    res = analysis.search_go_for_it(ctx, opt)
    rep["goforit"] = dict(b_min=res.b_min, d_min=res.d_min, name=res.name,
                          evaluations=res.evaluations, seconds=res.seconds)
    md += ["## Go for it", "",
           f"Best B_n (n = 1..6) = {res.b_min}, D_n = {res.d_min} "
           f"({res.evaluations} exact evaluations, {res.seconds:.0f} s).", ""]
    names.append(res.name)

  md += ["## Exact win rates against the optimal player", "",
         "| strategy | first | second | overall |", "|---|---|---|---|"]
  rep["exact"] = {}
  strats = {}
  for s in names:
    strats[s] = opt if s == "optimal" else analysis.strategy(s, ctx)
    out = out_opt if s == "optimal" else evaluation.turn_outcomes(
        strats[s], layout, roll)
    r = evaluation.evaluate_outcomes(out, strats[s].class_of_key, out_opt,
                                     opt.class_of_key, layout)
    rep["exact"][s] = dict(first=r.first, second=r.second,
                           overall=r.overall)
    md.append(f"| {s} | {r.first:.6f} | {r.second:.6f} | {r.overall:.6f} |")
  md.append("")

  curve = analysis.komi(w0, layout, 1000)
  k, w = analysis.fairest(curve)
  rep["komi"] = dict(curve=curve, fairest=k, fairest_win=w)
  md += ["## Komi (both optimal)", "", "| k | P(first player wins) |",
         "|---|---|"] + [f"| {kk} | {ww:.6f} |" for kk, ww in curve] + [
             "", f"Fairest komi: {k} points (first player wins {w:.6f}).", ""]

  if _GAMES.value:
    md += ["## Monte Carlo against the exact values", "",
           f"{_GAMES.value:,} games per pairing (half with each player "
           "first), seed = row number.", "",
           "| A vs optimal | simulated first | exact | z | simulated second "
           "| exact | z | seconds |", "|---|---|---|---|---|---|---|---|"]
    dense_opt = simulation.dense(opt, layout)
    rep["simulation"] = {}
    for seed, s in enumerate(names):
      t0 = time.time()
      a = dense_opt if s == "optimal" else strats[s]
      e = simulation.simulate(a, dense_opt, layout, roll, _GAMES.value, seed)
      ex = rep["exact"][s]
      z1 = (e.first - ex["first"]) / e.first_se
      z2 = (e.second - ex["second"]) / e.second_se
      secs = time.time() - t0
      rep["simulation"][s] = dict(first=e.first, first_se=e.first_se,
                                  second=e.second, second_se=e.second_se,
                                  z_first=z1, z_second=z2, seconds=secs)
      md.append(f"| {s} | {e.first:.6f} ± {e.first_se:.6f} | "
                f"{ex['first']:.6f} | {z1:+.2f} | {e.second:.6f} ± "
                f"{e.second_se:.6f} | {ex['second']:.6f} | {z2:+.2f} | "
                f"{secs:.0f} |")
      logging.info("simulated %s: z = %+.2f, %+.2f (%.0f s)", s, z1, z2, secs)
    i = layout.index_of(0)
    md += ["", f"Solver W0 at the start: {w0[i, i, 0, 0]:.9f}.", ""]
  md.append(f"Total time {time.time() - start:.0f} s.")
  path = os.path.join(workdir, "analysis")
  os.makedirs(path, exist_ok=True)
  with open(os.path.join(path, "strategy_report.md"), "w") as f:
    f.write("\n".join(md) + "\n")
  with open(os.path.join(path, "strategy_report.json"), "w") as f:
    json.dump(rep, f, indent=1, default=str)
  print("\n".join(md))


if __name__ == "__main__":
  flags.mark_flags_as_required(["config", "workdir"])
  app.run(main)
