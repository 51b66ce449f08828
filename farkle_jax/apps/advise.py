"""What to keep and whether to roll on, for a position and a roll.

    farkle advise --b 0 --d 0 --roll 6,5,3,3,3,2
    farkle advise --b 500 --d 1200 --t 350 --n 2
    farkle advise --shipped default --t 650 --n 3 --roll 1,1,5 --json
    farkle advise --workdir W --b 500 --d 1200 --t 350 --roll 2,2,4
    farkle advise --workdir W3 --scores 0,500,1200 --roll 1,5,3,3,3,2
    farkle advise --interactive

With a roll: every legal way to set dice aside (dice kept, points, the turn
total and dice left after it, the win probability when play goes on
optimally, and 'bust': the chance that the turn then ends in a farkle,
playing on as the values say), best first, then bank or roll after the
best one. Without a roll: bank or roll at the position, with both win
probabilities and the chance to bust when rolling on. Without
--workdir the solved values shipped with the package answer (--shipped).

Interactive (--interactive, or no position or roll flag at a terminal):
asks for the banked scores (the mover's first; then the farkle counts
under a penalty), the turn total and the roll, answers, and asks again;
Enter keeps the value in brackets, no roll asks for the dice to roll and
answers bank or roll. A whole query also fits on one line, as `history`
lists the past ones: scores=0,0 t=350 roll=6,5,3. `q` (or Ctrl-D) quits.

`python -m farkle_jax.apps.advise` is the same command. A two-player query
reads the stored values with NumPy alone: it answers in a blink.
"""

import json
import sys
from typing import NamedTuple

from absl import app, flags

import farkle_jax  # (also enables float64)
from farkle_jax.apps import command_line
from farkle_jax.strategy import positions, solved_game
from farkle_jax.strategy.positions import PositionError

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run "
                               "(default: the shipped values, --shipped).")
_SHIPPED = flags.DEFINE_enum("shipped", "facebook", solved_game.SHIPPED,
                             "Shipped solved values to use without --workdir.")
_B, _D, _, _ = command_line.define_key_flags()  # --f, --e: key_fields
_T = flags.DEFINE_integer("t", 0, "Turn total so far.")
_N = flags.DEFINE_integer("n", 6, "Dice to roll (default: 6, or with "
                         "--roll the dice it shows; given, the roll must "
                         "show that many).")
_ROLL = flags.DEFINE_string("roll", None, "The dice rolled, e.g. 6,5,3,3,3,2 "
                            "(none: bank or roll at the position).")
command_line.define_scores_flags()
_JSON = flags.DEFINE_bool("json", False, "Print JSON instead of text.")
_ALLOW = flags.DEFINE_bool("allow_unconverged", False, "Read a run that "
                           "stopped at max_iterations above its tolerance.")
_INTERACTIVE = flags.DEFINE_bool(
    "interactive", False, "Ask for positions and rolls in a loop (the "
    "default at a terminal without a position or roll flag).")

# The flags that say a position: given, there is nothing to ask for.
POSITION_FLAGS = ("b", "d", "f", "e", "hands", "t", "n", "roll", "scores",
                  "counts")


class Query(NamedTuple):
  """One question to the advisor."""
  scores: tuple[int, ...]          # banked scores, the mover's first
  counts: tuple[int, ...] | None   # farkle counts (None: the rules' start)
  t: int = 0                       # turn total so far
  n: int | None = None             # dice to roll (None: the roll's, or 6)
  roll: tuple | None = None        # the faces rolled (None: bank or roll)

  def line(self, hands: bool = False) -> str:
    """The query on one line, as `history` lists it and a prompt takes it
    (under rules.hands, `hands`: the counts are hands, numbered from 1)."""
    words = [f"scores={_join(self.scores)}"]
    if self.counts is not None and hands:
      words.append(f"hands={_join(c + 1 for c in self.counts)}")
    elif self.counts is not None:
      words.append(f"counts={_join(self.counts)}")
    words.append(f"t={self.t}")
    if self.n is not None:
      words.append(f"n={self.n}")
    if self.roll is not None:
      words.append(f"roll={_join(self.roll)}")
    return " ".join(words)


def _join(values) -> str:
  return ",".join(map(str, values))


def format_decision(where: str, dec: solved_game.Decision,
                    bank_min: int) -> str:
  """Bank or roll on, with both win probabilities and the chance to end
  the turn in a farkle when rolling on ('bust')."""
  if dec.roll is None:
    return f"{where}: bank, and win the game"
  bust = ("" if dec.bust is None
          else f", bust {positions.format_bust(dec.bust)}")
  if dec.bank is None:
    return (f"{where}: roll (win probability {dec.roll:.6f}{bust}); banking "
            f"is not allowed below {bank_min}")
  return (f"{where}: {dec.best} (bank {dec.bank:.6f}, roll {dec.roll:.6f}"
          f"{bust})")


def format_advice(adv: solved_game.Advice, bank_min: int,
                  game: solved_game.SolvedGame | None = None) -> str:
  """The advice as text (`game` names the dice states where dice differ)."""
  words = game.dice_words if game else solved_game.dice_count
  label = game.dice_label if game else str
  p = adv.position
  where = (game.layout.key_words(p.b, p.d, p.f, p.e) if game
           else f"b={p.b} d={p.d} f={p.f} e={p.e}")
  lines = [f"{where}, turn total {p.t}, rolled "
           f"{words(p.n)}: {','.join(map(str, adv.roll))}"]
  if not adv.choices:
    lines.append(f"farkle: nothing scores; the turn ends with nothing "
                 f"banked (win probability {adv.farkle:.6f})")
    return "\n".join(lines)
  lines.append(f"  {'keep':<14}{'points':>7}{'turn total':>12}"
               f"{'dice left':>11}{'win probability':>17}{'bust':>8}")
  for i, c in enumerate(adv.choices):
    kept = " ".join(map(str, c.kept))
    note = "  best" if i == 0 else ""
    win = f"{c.win:.6f}" if not c.wins_now else "1 (bank: wins)"
    lines.append(f"  {kept:<14}{c.points:>7}{c.t:>12}{label(c.n):>11}"
                 f"{win:>17}{positions.format_bust(c.bust):>8}{note}")
  best = adv.choices[0]
  dice = words(best.n)
  lines.append(format_decision(f"then, at t={best.t} with {dice}",
                               adv.decision, bank_min))
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  roll = positions.parse_dice(_ROLL.value) if _ROLL.value is not None else None
  game = farkle_jax.load(_WORKDIR.value, _SHIPPED.value, _ALLOW.value)
  if _interactive():
    Session(game, lambda q: answer(game, q, _JSON.value,
                                   game.players > 2)).run()
    return
  by_scores = command_line.by_scores(game.players)
  if by_scores:
    scores, counts = command_line.seats_position(game.players, game.rules)
  else:
    scores, counts = ((_B.value, _D.value),
                      command_line.key_fields(game.rules))
  query = Query(tuple(scores), None if counts is None else tuple(counts),
                _T.value, _N.value if _N.present else None, roll)
  print(answer(game, query, _JSON.value, by_scores))


def _interactive() -> bool:
  """Whether to ask in a loop: --interactive, or by default at a terminal
  when no flag says a position."""
  if _INTERACTIVE.present:
    if _INTERACTIVE.value:
      command_line.refuse_given(POSITION_FLAGS, "--interactive asks for "
                                "the position itself")
    return _INTERACTIVE.value
  return sys.stdin.isatty() and not any(
      flags.FLAGS[name].present for name in POSITION_FLAGS)


def answer(game, query: Query, as_json: bool, by_scores: bool) -> str:
  """The advice for `query` as text (or JSON): by every player's score
  (any number of players) or, for two, as the position (b, d, f, e)."""
  if by_scores:
    return _advice_by_scores(game, query, as_json)
  counts = query.counts
  if counts is None:   # the rules' start (under rules.hands: 0, 1)
    counts = positions.check_players(game.rules, query.scores, None)
  (b, d), (f, e) = query.scores, counts
  pos = solved_game.Position(b, d, f, e, query.t, _n_given(game, query))
  bank_min = game.bank_minimum(pos.b, pos.b_on)
  if query.roll is None:
    dec = game.decision(pos)
    return (json.dumps({"position": pos._asdict(), **dec.as_dict()},
                       indent=1)
            if as_json else format_decision(
                f"{game.layout.key_words(pos.b, pos.d, pos.f, pos.e)}, "
                f"t={pos.t} with "
                f"{solved_game.dice_count(pos.n)}", dec, bank_min))
  adv = (game.advise(game.as_given(pos), query.roll, dice_state=True)
         if query.n is not None else game.advise(pos, query.roll))
  return (json.dumps(adv.as_dict(), indent=1) if as_json
          else format_advice(adv, bank_min, game))


def _n_given(game, query: Query) -> int:
  """n, or without it the dice the roll shows (where the dice differ,
  the roll names its dice state itself), else 6."""
  roll = query.roll
  if query.n is not None:
    return query.n
  if roll is None or not game.rules.dice_alike:
    return _N.default
  return len(roll) if 1 <= len(roll) <= 6 else _N.default


def _advice_by_scores(game, query: Query, as_json: bool) -> str:
  """Advice for every player's score (any number of players): each value
  a vector over the players, the mover's first."""
  scores, counts, t, n, roll = query
  if as_json:
    return json.dumps(farkle_jax.advise(game, scores, roll, t, n, counts))
  # The seat engine's formats (JAX) only where a query asks by scores.
  from farkle_jax.strategy import seat_game
  if roll is not None:
    return seat_game.format_advice(game, scores, t, roll, counts, n)
  d = farkle_jax.advise(game, scores, None, t, n, counts)
  bank = seat_game.format_vector(d["bank"]) if d["bank"] else "not allowed"
  roll_on = (seat_game.format_vector(d["roll"])
             + f", bust {positions.format_bust(d.get('bust'))}"
             if d["roll"] else "not needed: banking wins")
  n = _N.default if n is None else n
  dice = (solved_game.dice_count(n) if game.rules.dice_alike else
          game.dice_words(game.check.dice_state(counts[0] if counts else 0,
                                                n)))
  return (f"scores {_join(scores)}, t={t} with {dice}: "
          f"{d['best']} (bank {bank}; roll {roll_on})")


_QUIT = ("q", "quit", "exit")
_HELP = """Each query asks, one after the other: the banked scores (the player
to move first, e.g. 500,1200), the farkle counts where the rules count
them, the turn total (points) and the roll (e.g. 6,5,3,3,3,2); with no
roll, the dice to roll, and the answer is bank or roll. Enter keeps the
value in brackets. A whole query also fits on one line at any prompt:
scores=500,1200 t=350 roll=6,5,3 (or n=2 instead of a roll; counts=0,1,
or under rules.hands hands=2,1, numbered from 1).
history: the past queries, so written; q (or Ctrl-D): quit; Ctrl-C: drop
the query being typed."""


class _Whole(Exception):
  """A whole query typed on one line at a prompt."""

  def __init__(self, query: Query):
    super().__init__(query.line(hands=True))
    self.query = query


class Session:
  """An interactive session: asks for queries a field at a time (or whole,
  on one line), answers each with `reply` and keeps their history (with
  readline where there is one, so the arrows recall past queries)."""

  def __init__(self, game, reply, read=input, write=print):
    self.game, self.reply, self.read, self.write = game, reply, read, write
    self.past: list[str] = []
    self.last = Query(tuple([0] * game.players), None)
    self.lines = _line_editing()

  def run(self) -> None:
    """Asks and answers until `q` or the end of the input."""
    self.write(f"farkle advise: {self.game!r}\nEnter keeps the value in "
               "brackets; help explains, history lists past queries, q "
               "quits.")
    while True:
      try:
        query = self.ask()
        self.last = query
        text = self.reply(query)
      except EOFError:           # q, or Ctrl-D
        self.write("")
        return
      except KeyboardInterrupt:  # Ctrl-C: the query is dropped
        self.write("")
        continue
      except ValueError as e:    # a position the game refuses
        self.write(f"error: {_first_line(e)}")
        continue
      line = query.line(hands=bool(self.game.rules.hands))
      self.past.append(line)
      if self.lines:
        self.lines.add_history(line)
      self.write(text)

  def ask(self) -> Query:
    """The next query (a PositionError if its scores or counts do not fit
    the game)."""
    last, rules = self.last, self.game.rules
    try:
      scores = self.field("scores", last.scores, _scores)
      counts = None
      if rules.farkle_states > 1:
        start = positions.check_players(rules, scores, None)
        if rules.hands:   # shown and typed numbered from 1
          hands = tuple(h + 1 for h in last.counts or start)
          counts = self.field("hands", hands, _hands, _join(hands))
        else:
          counts = self.field("farkle counts", last.counts or start,
                              _counts)
      t = self.field("turn total", last.t, _number("turn total"))
      roll = self.field("roll", None, positions.parse_dice,
                        "none: bank or roll")
      n = None if roll else self.field("dice to roll", last.n or 6,
                                       _number("dice to roll"))
      query = Query(scores, counts, t, n, roll)
    except _Whole as whole:
      query = whole.query
    positions.check_players(rules, query.scores, query.counts)
    return query

  def field(self, label: str, default, parse, shown: str | None = None):
    """One field, asked until it parses (or a command: help, history,
    q); Enter keeps `default`. _Whole for a whole query on one line."""
    if shown is None:
      shown = _join(default) if isinstance(default, tuple) else default
    while True:
      text = self.read(f"{label} [{shown}]: ").strip()
      if text.lower() in _QUIT:
        raise EOFError
      if text in ("help", "?", "history"):
        self.write(_HELP if text != "history" else self.history())
        continue
      try:
        if "=" in text:
          raise _Whole(parse_line(text))
        return parse(text) if text else default
      except PositionError as e:
        self.write(f"error: {_first_line(e)}")

  def history(self) -> str:
    """The past queries, numbered, each on the line a prompt takes."""
    return "\n".join(f"{i:>4}  {line}" for i, line in enumerate(
        self.past, start=1)) or "no queries yet"


def parse_line(text: str) -> Query:
  """A whole query on one line, as `Query.line` writes it: scores=0,0
  [counts=0,1] [t=350] [n=2 | roll=6,5,3] (the words in any order)."""
  given = {}
  for word in text.split():
    key, _, value = word.partition("=")
    if key not in Query._fields + ("hands",) or not value or key in given:
      raise PositionError(f"{word[:40]!r}: a query on one line is words "
                          "scores=, counts= (or hands=), t=, n=, roll=, "
                          "each once")
    given[key] = value
  if "hands" in given:   # numbered from 1: the counts of rules.hands
    if "counts" in given:
      raise PositionError("counts= or hands=, not both")
    given["counts"] = _join(h - 1 for h in _hands_typed(given.pop("hands")))
  if "scores" not in given:
    raise PositionError("a query on one line names the scores, e.g. "
                        "scores=0,0 roll=6,5,3,3,3,2")
  return Query(
      _scores(given["scores"]),
      _counts(given["counts"]) if "counts" in given else None,
      _number("turn total")(given.get("t", "0")),
      _number("dice to roll")(given["n"]) if "n" in given else None,
      positions.parse_dice(given["roll"]) if "roll" in given else None)


def _scores(text: str) -> tuple[int, ...]:
  return positions.parse_scores(text, "scores", flag=False)


def _counts(text: str) -> tuple[int, ...]:
  return positions.parse_scores(text, "counts", flag=False)


def _hands_typed(text: str) -> tuple[int, ...]:
  """Hands as typed: numbers from 1."""
  hands = positions.parse_scores(text, "hands", flag=False)
  if any(h < 1 for h in hands):
    raise PositionError(f"hands {text[:24]!r}: numbered from 1, as the "
                        "tables number them, e.g. 2,1")
  return hands


def _hands(text: str) -> tuple[int, ...]:
  """Hands typed (from 1) as the counts of rules.hands (from 0)."""
  return tuple(h - 1 for h in _hands_typed(text))


def _number(what: str):
  """A parser of a whole number >= 0 (a turn total, the dice to roll)."""
  def parse(text: str) -> int:
    if not text.isdigit() or len(text) > 9:
      raise PositionError(f"{what} {text[:24]!r}: a whole number, e.g. "
                          f"{350 if what == 'turn total' else 2}")
    return int(text)
  return parse


def _first_line(e: Exception) -> str:
  return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _line_editing():
  """readline, where there is one, with only whole queries in its history
  (the arrows recall them); else None."""
  try:
    import readline
  except ImportError:   # (a Python built without it)
    return None
  readline.set_auto_history(False)
  return readline


def cli() -> None:
  """The command (`farkle advise`)."""
  command_line.run(main)


if __name__ == "__main__":
  cli()
