"""Play Farkle against the computer in a terminal, with any number of
players (the number of the solved run's).

    farkle play
    farkle play --opponent bank:300 --seed 7 --first computer
    farkle play --workdir runs/default --dice typed    # with real dice
    farkle play --workdir runs/three_2000              # you and 2 computers

After each of your decisions the game shows the win probability of the move
you made and of the best move (both players optimal from there on); at the
end, the win probability you gave away in all and your three costliest
decisions. Keep dice by their number in the list or by their faces (e.g.
`5 3 3 3`); answer b or r to bank or roll; q quits.
"""

from __future__ import annotations

import sys
from typing import Callable

from absl import app, flags

import farkle_jax  # (also enables float64)
from farkle_jax.apps import command_line
from farkle_jax.strategy import catalog, match, positions, solved_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run "
                               "(default: the shipped values, --shipped).")
_SHIPPED = flags.DEFINE_enum("shipped", "facebook", solved_game.SHIPPED,
                             "Shipped solved values to use without --workdir.")
_OPPONENT = flags.DEFINE_string("opponent", "optimal",
                                f"The computer's strategy: {catalog.NAMES}.")
_SEED = flags.DEFINE_integer("seed", None, "Seed of the dice (default: "
                             "different every game).")
_FIRST = flags.DEFINE_enum("first", "human", ["human", "computer"],
                           "Who plays first (with more players: the "
                           "computer to your right).")
_DICE = flags.DEFINE_enum("dice", "random", ["random", "typed"], "random: "
                          "seeded dice; typed: type in every roll (real dice).")


class Quit(Exception):
  """The person ended the game."""


def _ask(prompt: str) -> str:
  try:
    text = input(prompt).strip()
  except EOFError:
    raise Quit() from None
  if text.lower() in ("q", "quit", "exit"):
    raise Quit()
  return text


def _retry(step: Callable[[str], match.MatchState], prompt: str
           ) -> match.MatchState:
  """Asks until `step` accepts the answer; says why it did not."""
  while True:
    try:
      return step(_ask(prompt))
    except solved_game.PositionError as e:
      print(f"  ? {e}")


def _person(game, s: match.MatchState, dice: match.Dice | None
            ) -> match.MatchState:
  if s.phase == "roll":
    if dice is not None:
      return match.roll(game, s, dice.roll(s.n))
    return _retry(lambda a: match.roll(game, s, positions.parse_dice(a)),
                  f"roll {match.dice_words(game, s.n)} and type the faces: ")
  if s.phase == "keep":
    # Listed by points, not by win probability: the list is no hint.
    options = sorted(match.options(game, s),
                     key=lambda c: (-c.points, len(c.kept), c.kept))
    for i, c in enumerate(options, 1):
      print(f"  {i}) keep {' '.join(map(str, c.kept)):<12} {c.points:>5} "
            f"points -> turn total {c.t}, {match.dice_words(game, c.n)}")
    return _retry(lambda a: match.keep(game, s, _kept(a, options)),
                  f"keep which? [1-{len(options)} or the faces] ")
  return _retry(lambda a: match.decide(game, s, _action(a)),
                f"turn total {s.t}, {match.dice_words(game, s.n)}: "
                "[b]ank or [r]oll? ")


def _kept(answer: str, options) -> tuple[int, ...]:
  if answer.isdigit() and len(answer) <= 2:
    if not 1 <= int(answer) <= len(options):
      raise solved_game.PositionError(
          f"{answer}: answer 1-{len(options)} or the faces to keep")
    return options[int(answer) - 1].kept
  if not answer or not all(ch.isdigit() or ch in ", " for ch in answer):
    raise solved_game.PositionError(
        f"{answer!r}: answer 1-{len(options)} or the faces to keep")
  return positions.parse_dice(answer)


def _action(answer: str) -> str:
  a = answer.lower()
  if a in ("b", "bank"):
    return "bank"
  if a in ("r", "roll"):
    return "roll"
  raise solved_game.PositionError(f"{answer!r}: answer b (bank) or r (roll)")


def _feedback(before: match.MatchState, after: match.MatchState) -> None:
  if len(after.moves) > len(before.moves):
    m = after.moves[-1]
    verdict = ("best" if m.loss < 5e-10
               else f"gave away {m.loss:.4f}; best: {m.best} "
                    f"{m.best_win:.4f}")
    print(f"  -> {m.made}: win probability {m.made_win:.4f} ({verdict})")


def play(game, computer: match.Computer, dice: match.Dice | None,
         first: int) -> match.MatchState:
  """Plays one game on the terminal; returns the last state."""
  s = match.start(game, first)
  names = match.names(s.players)
  shown = 0
  while s.phase != "over":
    for line in s.log[shown:]:
      print(line)
    shown = len(s.log)
    if s.phase == "roll" and s.n == 6 and s.t == 0:
      seats = ", ".join(f"{who} {points}" for who, points in
                        zip(names, match.scores(game, s)))
      last = (f"; last turn: beat {s.bar}{match.tie_words(game)}"
              if s.bar else "")
      print(f"-- turn {s.turn}: {seats} (goal {game.rules.goal}{last})")
    before = s
    if s.mover == match.PERSON:
      s = _person(game, s, dice)
      _feedback(before, s)
    elif s.phase == "roll" and dice is None:
      s = _retry(lambda a: computer.step(s, positions.parse_dice(a)),
                 f"{names[s.mover]} rolls {match.dice_words(game, s.n)}; "
                 "type the faces: ")
    else:
      s = computer.step(s, dice.roll(s.n) if dice and s.phase == "roll"
                        else None)
  for line in s.log[shown:]:
    print(line)
  return s


def report(s: match.MatchState) -> str:
  total, worst = match.summary(s)
  lines = [f"game over: {match.result(s)}. You made "
           f"{len(s.moves)} decisions and gave away {total:.4f} win "
           "probability in all."]
  for i, m in enumerate(worst, 1):
    lines.append(f"  {i}. {m.where}: {m.made} ({m.made_win:.4f}) instead "
                 f"of {m.best} ({m.best_win:.4f}), -{m.loss:.4f}")
  if not worst:
    lines.append("  every decision was a best one")
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  game = farkle_jax.load(_WORKDIR.value, _SHIPPED.value)
  computer = match.Computer(game, _OPPONENT.value)
  dice = (match.Dice(_SEED.value, game.rules) if _DICE.value == "random"
          else None)
  others = ("the computer" if game.players == 2
            else f"{game.players - 1} computers")
  print(f"Farkle to {game.rules.goal} ({game.rules.name} rules, values "
        f"{game.label}) against {others} "
        f"playing {computer.name}.")
  first = match.PERSON if _FIRST.value == "human" else match.COMPUTER
  try:
    s = play(game, computer, dice, first)
  except Quit:
    print("\ngame abandoned")
    sys.exit(0)
  print(report(s))


def cli() -> None:
  """The command (`farkle play`)."""
  command_line.run(main)


if __name__ == "__main__":
  cli()
