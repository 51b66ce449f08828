"""Iterations experiment: how each solve method converges.

  python experiments/iterations.py --config configs/default.py \
      --workdir runs/iterations --methods=value_iteration,ordered

Solves the config with each method (workdir/<method>, one sweep per call so
that every sweep is traced; resumed when present) and reports, per method,
the residual after each sweep, the sweeps and state updates needed to reach
the config's tolerance, and the first-player win probability as it
converges. Writes iterations.csv, iterations.png and iterations.md.

A run directory solved earlier without a trace (e.g. with several sweeps per
call) contributes its per-sweep residuals only.
"""

from __future__ import annotations

import os
import time

from absl import app, flags, logging
from ml_collections import config_flags

import farkle_jax  # noqa: F401  (float64)
from farkle_jax.apps import command_line
import outputs
from farkle_jax.solver import checkpointing, configuration, driver, results


PUBLISHED_SWEEPS = 62  # published plain value iteration, facebook, rel 1e-9


def rows_of(method: str, summary: dict) -> list[dict]:
  """One row per sweep: residual, and (when traced) work and W(start)."""
  trace = {t["iteration"]: t for t in summary.get("trace", [])}
  per_sweep = summary["state_updates"] / max(summary["iterations"], 1)
  rows = []
  for i, res in enumerate(summary["residual_history"], start=1):
    t = trace.get(i)
    rows.append(dict(
        method=method, sweep=i, residual=res,
        state_updates=(t["work"] * summary["model_states"] if t
                       else float("nan")),
        first_player_win=t["first_player_win"] if t else float("nan"),
        seconds=t["sweep_seconds"] if t else float("nan"),
        mean_updates=per_sweep))
  return rows


def sweeps_to(rows: list[dict], tol: float) -> int | None:
  """First sweep whose residual is below tol."""
  return next((r["sweep"] for r in rows if r["residual"] < tol), None)


def _plot(path, by_method, final):
  plt = outputs.pyplot()
  fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), dpi=90)
  for m, rows in by_method.items():
    x = [r["sweep"] for r in rows]
    axes[0].semilogy(x, [r["residual"] for r in rows], ".-", label=m)
    u = [r["state_updates"] for r in rows]
    if all(v == v for v in u):
      axes[1].semilogy(u, [r["residual"] for r in rows], ".-", label=m)
    w = [abs(r["first_player_win"] - final) for r in rows]
    if all(v == v for v in w):
      axes[2].semilogy(x, [max(v, 1e-17) for v in w], ".-", label=m)
  axes[0].set(xlabel="sweep", ylabel="max change (config norm)",
              title="residual per sweep")
  axes[1].set(xlabel="state updates", title="residual per work")
  axes[2].set(xlabel="sweep", ylabel="|W(start) - final|",
              title="first-player win probability")
  for ax in axes:
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
  outputs.save(fig, path)


def main(argv):
  del argv
  logging.get_absl_handler().addFilter(checkpointing.QuietOrbax())
  wd = _WORKDIR.value
  os.makedirs(wd, exist_ok=True)
  given = dict(r.split("=", 1) for r in _RUN.value)
  by_method, summaries = {}, {}
  t0 = time.time()
  for m in _METHODS.value:
    if m not in configuration.METHODS:
      raise app.UsageError(f"--methods: {m!r} is not one of "
                           f"{configuration.METHODS}")
    if m in given:
      summary = results.read_summary(given[m])
      if summary is None:
        raise app.UsageError(f"--run={m}={given[m]}: no finished run there "
                             "(no summary.json)")
    else:
      cfg = _CONFIG.value.copy_and_resolve_references()
      cfg.solver.method = m
      cfg.solver.sweeps_per_call = 1
      summary = driver.ensure(cfg, os.path.join(wd, m)).summary
    summaries[m] = summary
    by_method[m] = rows_of(m, summary)
  final = summaries[_METHODS.value[-1]]["first_player_win"]
  keys = ["method", "sweep", "residual", "state_updates", "first_player_win",
          "seconds"]
  outputs.write_csv(os.path.join(wd, "iterations.csv"), ",".join(keys),
                    [",".join(str(r[k]) for k in keys)
                     for rows in by_method.values() for r in rows])
  _plot(os.path.join(wd, "iterations.png"), by_method, final)
  any_summary = next(iter(summaries.values()))
  tol, norm = any_summary["tol"], any_summary["norm"]
  md = ["# Iterations experiment", "",
        outputs.command_line(time.time() - t0), "",
        f"Rules {any_summary['rules']['name']}, goal "
        f"{any_summary['rules']['goal']}, floor "
        f"{any_summary['rules']['floor']}; {any_summary['model_states']:,} "
        f"model states; stop at {norm} max change < {tol:g}. The published "
        f"plain value iteration took {PUBLISHED_SWEEPS} sweeps (facebook, "
        "floor -2500, relative 1e-9). Figure: iterations.png; data: "
        "iterations.csv.", "",
        "| method | sweeps to tol | state updates | sweep time (s) | "
        "first-player win |", "|---|---|---|---|---|"]
  for m, s in summaries.items():
    md.append(f"| {m} | {sweeps_to(by_method[m], tol)} | "
              f"{s['state_updates']:.3e} | {s['sweep_seconds']:.1f} | "
              f"{s['first_player_win']:.9f} |")
  md.append("")
  outputs.write_report(os.path.join(wd, "iterations.md"), md)


if __name__ == "__main__":
  _CONFIG = config_flags.DEFINE_config_file("config", None, "Rules config.")
  _WORKDIR = flags.DEFINE_string("workdir", None, "Experiment directory.")
  _METHODS = flags.DEFINE_list("methods", list(configuration.METHODS),
                               "Solve methods to compare.")
  _RUN = flags.DEFINE_multi_string(
      "run", [], "method=DIR: take that method's trace from an existing run "
      "directory instead of solving (e.g. a long baseline).")
  command_line.run(main, required=("config", "workdir"))
