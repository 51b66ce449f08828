"""Optimal play for two to six players (docs/model.md §8): each seat's win
probability, how the opening turn changes with the number of players, and
what a two-player-optimal or a maximum-score player loses among optimal
players.

  python experiments/players.py --workdir runs/players

Solves every run of `RUNS` in workdir/<name> (a finished run is loaded, an
unfinished one resumed; runs/players/minimal_3p_10000 may be a finished
solve of configs/three_players.py), then writes players.md, players.json
and opening_thresholds.png to --out. Goals below 10,000 are in the names and
the tables: the full goal does not fit a 2-core CPU beyond three players.
"""

from __future__ import annotations

import json
import os
import sys
import time

from absl import app, flags

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import farkle_jax  # noqa: F401,E402  (float64)
import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
from farkle_jax.apps import command_line  # noqa: E402
from farkle_jax.solver import configuration, driver, results  # noqa: E402
from farkle_jax.strategy import seat_game, seated, simulation  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# name: (preset, players, goal, floor)
RUNS = {
    "minimal_2p_10000": ("minimal", 2, 10000, None),
    "minimal_3p_10000": ("minimal", 3, 10000, None),
    "minimal_2p_2000": ("minimal", 2, 2000, None),
    "minimal_3p_2000": ("minimal", 3, 2000, None),
    "minimal_4p_2000": ("minimal", 4, 2000, None),
    "minimal_5p_1000": ("minimal", 5, 1000, None),
    "minimal_6p_500": ("minimal", 6, 500, None),
    "facebook_2p_1000": ("facebook", 2, 1000, -500),
    "facebook_3p_1000": ("facebook", 3, 1000, -500),
    "facebook_4p_500": ("facebook", 4, 500, -200),
}
SEATED = ("minimal_3p_2000", "minimal_2p_2000")  # (N players, two players)

_WORKDIR = flags.DEFINE_string("workdir", None, "Where the runs are.")
_RUNS = flags.DEFINE_list("runs", list(RUNS), "Names of RUNS to solve.")
_GAMES = flags.DEFINE_integer("games", 4000, "Monte Carlo games per seat.")
_OUT = flags.DEFINE_string("out", "experiments/results/players",
                           "Where the results go.")


def config_of(name: str):
  preset, players, goal, floor = RUNS[name]
  config = configuration.base(preset)
  config.rules.update(players=players, goal=goal)
  if floor is not None:
    config.rules.floor = floor
  # The seat engine for two players too: the same code for every N.
  config.solver.update(tol=1e-12, norm="absolute", max_iterations=40,
                       method="seats")
  return config


def solve(name: str) -> tuple[seat_game.SeatGame, float]:
  workdir = os.path.join(_WORKDIR.value, name)
  t0 = time.time()
  try:
    game = seat_game.SeatGame.load(workdir)
  except results.ResultsError:   # not there, unfinished or damaged
    driver.run(config_of(name), workdir)
    game = seat_game.SeatGame.load(workdir)
  return game, time.time() - t0


def opening(game: seat_game.SeatGame) -> dict:
  n = game.seats.players
  return dict(players=n, rules=game.rules.name, goal=game.rules.goal,
              floor=game.rules.low, seat_win=game.summary["seat_win"],
              bank_from=game.bank_thresholds((0,) * n),
              unsettled_keys=game.summary.get("unsettled_keys", 0),
              unsettled_apart=game.summary.get("unsettled_apart", 0.0),
              sweeps=game.summary["iterations"],
              sweep_seconds=game.summary["sweep_seconds"],
              model_states=game.summary["model_states"])


GUESTS = {"two_player": "Two-player-optimal",
          "max_score": "Maximum-expected-score"}


def seated_loss(games: int, guest: str) -> list[dict]:
  """The guest at each seat of the `SEATED` game: exact and simulated."""
  game, _ = solve(SEATED[0])
  pair, play = None, seated.max_score_table(game.seats)
  if guest == "two_player":
    pair = solve(SEATED[1])[0].w0[..., 0]
    play = seated.pair_turns(game.rules, pair)
  exact = seated.evaluate(game.seats, game.w0, pair, guest)
  key = (0,) * (2 * game.seats.players)
  rows = []
  for seat in range(game.seats.players):
    wins = seated.simulate(game, play, seat, games, seed=seat)
    p, se = simulation.win_rate(int(wins[seat]), games)
    ex = float(exact[seat][key][seat])
    rows.append(dict(seat=seat + 1, optimal=float(game.w0[key][seat]),
                     guest=ex, loss=float(game.w0[key][seat]) - ex,
                     simulated=p, se=se, z=(p - ex) / se, games=games))
  return rows


def write(out: dict, path: str) -> None:
  os.makedirs(path, exist_ok=True)
  with open(os.path.join(path, "players.json"), "w") as f:
    json.dump(out, f, indent=1)
  lines = ["| run | players | goal | seat 1 .. N win | bank from t, n = 6..1 "
           "| unsettled keys |", "|---|---|---|---|---|---|"]
  for name, r in out["runs"].items():
    banks = ", ".join("never" if b is None else str(b) for b in r["bank_from"])
    lines.append(f"| {name} | {r['players']} | {r['goal']} | "
                 + " / ".join(f"{p:.6f}" for p in r["seat_win"])
                 + f" | {banks} | {r['unsettled_keys']} |")
  for guest, rows in out["seated"].items():
    lines += ["", f"{GUESTS[guest]} guest among optimal players "
              f"({SEATED[0]}):", "",
              "| seat | optimal | guest (exact) | loss | simulated | z |",
              "|---|---|---|---|---|---|"]
    for r in rows:
      lines.append(f"| {r['seat']} | {r['optimal']:.6f} | {r['guest']:.6f}"
                   f" | {r['loss']:.6f} | {r['simulated']:.6f} +- "
                   f"{r['se']:.6f} | {r['z']:+.2f} |")
  with open(os.path.join(path, "players.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
  _figure(out["runs"], os.path.join(path, "opening_thresholds.png"))


def _figure(runs: dict, path: str) -> None:
  fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
  for ax, goal in zip(axes, (2000, 10000)):
    for name, r in sorted(runs.items()):
      if r["goal"] != goal or r["rules"] != "minimal":
        continue
      ys = [np.nan if b is None else b for b in r["bank_from"]]
      ax.plot(range(6, 0, -1), ys, marker="o", label=f"{r['players']} players")
    ax.set_title(f"minimal rules to {goal}: opening turn")
    ax.set_xticks(range(6, 0, -1))   # n = 6 may be all "never" (no point)
    ax.set_xlabel("dice left to roll")
    ax.set_ylabel("bank from turn total")
    ax.invert_xaxis()
    ax.legend()
  fig.tight_layout()
  fig.savefig(path, dpi=110)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  unknown = [n for n in _RUNS.value if n not in RUNS]
  if unknown:
    raise app.UsageError(f"--runs: unknown {unknown}; known: {list(RUNS)}")
  out = {"runs": {}, "seated": {}}
  for name in _RUNS.value:
    game, secs = solve(name)
    out["runs"][name] = opening(game)
    print(f"{name}: seats {game.summary['seat_win']} ({secs:.0f} s)",
          flush=True)
  if all(n in _RUNS.value for n in SEATED):
    out["seated"] = {g: seated_loss(_GAMES.value, g) for g in GUESTS}
  write(out, _OUT.value)
  print(open(os.path.join(_OUT.value, "players.md")).read())


if __name__ == "__main__":
  command_line.run(main, required=("workdir",))
