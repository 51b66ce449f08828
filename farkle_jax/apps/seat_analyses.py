"""The analyses of a game of more than two players (`farkle analyze seats`
and `farkle analyze seated`): every seat's win probability and where the
mover banks, and how a player of another strategy fares among optimal
players, exact and in simulated games."""

from __future__ import annotations

import os

from absl import flags

from farkle_jax.apps import progress
from farkle_jax.solver import configuration, driver, results, stage_engine
from farkle_jax.strategy import positions, seat_game, seated, simulation


def solved(config, workdir: str | None,
           allow_unconverged: bool = False) -> seat_game.SeatGame:
  """The solved N-player run of the config in `workdir` (solved first,
  resuming, unless it holds the finished run)."""
  if not workdir:
    raise configuration.ConfigError("seats and seated need --workdir (the "
                                    "solved run, or where to solve it)")
  seats, _ = stage_engine.check(config)
  try:
    game = seat_game.SeatGame.load(workdir, allow_unconverged)
    if game.rules == seats.rules:
      return game
  except results.ResultsError:   # none there yet, or another one
    pass
  progress.say(f"solving the run in {workdir} first (rerun, it resumes)")
  try:
    with progress.for_solve(verbose=flags.FLAGS.verbose) as display:
      driver.run(config, workdir, on_chunk=display)
  except driver.NotConverged:
    if not allow_unconverged:
      raise
  return seat_game.SeatGame.load(workdir, allow_unconverged)


def seats_report(game: seat_game.SeatGame, scores: str | None) -> dict:
  """Prints every seat's win probability from the opening, then at
  `scores` (every banked score from the mover on, "0,500,1200"; None: all
  0) with the smallest turn total each number of dice banks at."""
  n = game.players
  at = positions.parse_scores(scores or ",".join(["0"] * n))
  win = game.win_probabilities(at)
  banks = game.bank_thresholds(at)
  print(stage_engine.seat_table(game.summary))
  print(f"at scores {','.join(map(str, at))} (player to move first): "
        f"win probabilities {seat_game.format_vector(win)}")
  mover = game.key(at)
  states = ("n = 6..1 dice" if game.rules.dice_alike else "dice " + ", ".join(
      game.dice_label(n) for n in game.states(mover)[::-1]))
  print(f"bank from turn total, {states}: "
        + ", ".join("never" if b is None else str(b) for b in banks))
  return dict(scores=at, win=win.tolist(), bank_from=banks)


def seated_report(game: seat_game.SeatGame, config, workdir: str,
                  guest: str, games: int, seed: int) -> dict:
  """Prints, for each seat, how a `guest` player (`seated.GUESTS`) there
  fares among optimal players: exact, and in `games` simulated games."""
  pair, play = None, None
  if guest == "two_player":
    pair_config = config.copy_and_resolve_references()
    pair_config.rules.players = 2
    pair = results.load(_pair_workdir(pair_config, workdir)).w0
    play = seated.pair_turns(game.rules, pair)
  elif guest == "max_score":
    play = seated.max_score_table(game.seats)
  exact = seated.evaluate(game.seats, game.w0, pair, guest)
  opening = game.seats.opening()
  rows = []
  for seat in range(game.players):
    ex, opt = exact[seat][opening][seat], game.w0[opening][seat]
    bar = progress.CountBar(f"games, seat {seat + 1}")
    try:
      wins = seated.simulate(game, play, seat, games, seed + seat,
                             on_progress=bar)
    finally:
      bar.close()
    p, se = simulation.win_rate(int(wins[seat]), games)
    print(f"seat {seat + 1}: {guest} wins {ex:.6f} exact, optimal "
          f"{opt:.6f} (loss {opt - ex:+.6f}); {games:,} games "
          f"{p:.6f} +- {se:.6f}, z = {(p - ex) / se:+.2f}")
    rows.append(dict(seat=seat + 1, exact=ex, optimal=opt, simulated=p,
                     se=se))
  return dict(guest=guest, games=games, rows=rows)


def _pair_workdir(config, workdir: str) -> str:
  """Solves (or loads) the two-player game of the same rules."""
  where = os.path.join(workdir, "two_players")
  driver.ensure(config, where)
  return where
