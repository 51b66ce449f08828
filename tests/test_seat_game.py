"""A solved three-player game in a player's hands: queries agree with the
solved values and the rules, and the command-line tools take every
player's score."""

import json

import numpy as np
import pytest

import farkle_jax
import reference
from conftest import COMMANDS, play_web_games
from farkle_jax.solver import queries
from farkle_jax.strategy import seat_game
from farkle_jax.strategy.solved_game import PositionError


@pytest.fixture(scope="module")
def solved(three_players):
  return three_players, seat_game.SeatGame.load(three_players)


def test_a_turn_starts_at_the_solved_values(solved):
  _, game = solved
  for scores in [(0, 0, 0), (300, 0, 450), (100, 250, 50)]:
    turn = game.turn(scores)
    np.testing.assert_allclose(turn.rows[0, 5, :3],
                               game.win_probabilities(scores), atol=1e-13)


def test_choices_and_decisions_are_consistent(solved):
  _, game = solved
  scores = (0, 250, 300)
  choices = game.advise(scores, 0, (1, 5, 3, 3, 3, 2))
  assert [c.points for c in choices][:1] and all(
      a.win[0] >= b.win[0] for a, b in zip(choices, choices[1:]))
  assert {c.points for c in choices} >= {100, 50, 300, 450}
  for c in choices:
    assert abs(sum(c.win) - 1) < 1e-12
  d = game.decision(scores, 200, 2)
  assert d["bank"] is not None   # ties bank, as the solver decides
  assert d["best"] == ("bank" if d["bank"][0] >= d["roll"][0] else "roll")
  best = max(d["bank"], d["roll"], key=lambda v: v[0])
  turn = game.turn(scores)
  np.testing.assert_allclose(best, turn.rows[4, 1, :3], atol=1e-13)
  # At 450 points a bank of 50 wins, and every n banks there.
  assert game.bank_thresholds((450, 0, 0)) == [50] * 6


@pytest.mark.parametrize("scores, says", [
    ((0, 0), "expected 3 banked scores"),
    ((0, 0, 510), "not a banked score"),
    ((0, 0, 500), "not a banked score"),
])
def test_bad_positions_are_refused(solved, scores, says):
  _, game = solved
  with pytest.raises(PositionError, match=says):
    game.win_probabilities(scores)


def _run(module, *args):
  """`python -m farkle_jax.apps.<module> args`, forked from a worker
  (conftest.CommandLines)."""
  return COMMANDS(f"farkle_jax.apps.{module}", *args)


def test_table_and_advise_take_every_score(solved):
  workdir, game = solved
  out = _run("table", "--workdir", workdir, "--scores", "0,250,300")
  assert out.returncode == 0, out.stderr
  win = game.win_probabilities((0, 250, 300))
  assert f"{win[0]:.6f} {win[1]:.6f} {win[2]:.6f}" in out.stdout
  out = _run("advise", "--workdir", workdir, "--scores", "0,250,300",
             "--roll", "1,5,3,3,3,2")
  assert out.returncode == 0 and "best" in out.stdout
  out = _run("advise", "--workdir", workdir, "--scores", "0,250")
  assert out.returncode == 2
  assert out.stderr.startswith("error: scores 0,250: expected 3")
  # No answers: abandoned at the first choice (seeded dice: unseeded, the
  # computers can reach 500 before the person meets a choice that is not
  # forced).
  out = _run("play", "--workdir", workdir, "--seed", "1")
  assert out.returncode == 0, out.stderr
  assert "against 2 computers" in out.stdout
  assert out.stdout.rstrip().endswith("game abandoned")


def test_turn_table_starts_at_the_solved_values(solved):
  _, game = solved
  table = game.table((100, 250, 50), t_last=500)
  assert [r["t"] for r in table["rows"]][-1] == 450   # the last short of 500
  first = table["rows"][0]["cells"][0]
  assert first["n"] == 6 and first["action"] == "roll"
  np.testing.assert_allclose(first["win"], table["win"], atol=1e-13)
  for t_last in (-50, 550, 99_999_999_999_999):
    with pytest.raises(PositionError, match=f"t_max={t_last}: a turn total "
                       "from 0 to the goal 500"):
      game.table((0, 0, 0), t_last=t_last)


def test_json_output_and_flags_of_the_other_kind_of_run(solved, tiny_runs):
  workdir, game = solved
  out = _run("table", "--workdir", workdir, "--scores", "0,250,300",
             "--t_max", "100", "--json")
  assert out.returncode == 0, out.stderr
  assert json.loads(out.stdout) == game.table((0, 250, 300), None, 100)
  out = _run("advise", "--workdir", workdir, "--scores", "0,250,300",
             "--t", "250", "--roll", "1,5,2", "--json")
  assert out.returncode == 0, out.stderr
  got = json.loads(out.stdout)
  assert got == json.loads(json.dumps(game.advice((0, 250, 300), 250,
                                                 roll=(1, 5, 2))))
  best = got["choices"][0]
  assert (got["then"]["t"], got["then"]["n"]) == (best["t"], best["n"])
  out = _run("advise", "--workdir", workdir, "--b", "100", "--d", "0")
  assert out.returncode == 2
  assert out.stderr.strip() == ("error: --b, --d: for a two-player run; this "
                                "one has 3 players: give --scores (and "
                                "--counts)")
  two = tiny_runs("minimal")[3]   # --scores takes a two-player run too
  by_scores = _run("table", "--workdir", two, "--scores", "450,700",
                   "--t_max", "200", "--json")
  by_fields = _run("table", "--workdir", two, "--b", "450", "--d", "700",
                   "--t_max", "200", "--json")
  assert by_scores.returncode == 0 == by_fields.returncode, by_scores.stderr
  seat, pair = json.loads(by_scores.stdout), json.loads(by_fields.stdout)
  assert [r["t"] for r in seat["rows"]] == [r["t"] for r in pair["rows"]]
  for a, b in zip(seat["rows"], pair["rows"]):
    assert [c["win"][0] for c in a["cells"]] == [b["W"][str(n)]
                                                 for n in range(6, 0, -1)]
  out = _run("advise", "--workdir", two, "--scores", "0,0", "--b", "50")
  assert out.returncode == 2 and out.stderr.strip() == (
      "error: --b: give either --scores (and --counts) or --b, --d, --f, --e")
  out = _run("table", "--workdir", two, "--counts", "0,0", "--b", "50")
  assert out.returncode == 2 and out.stderr.strip() == (
      "error: --b: give either --scores (and --counts) or --b, --d, --f, --e")
  out = _run("advise", "--workdir", two, "--scores", "0,0", "--roll",
             "6,5,3,3,3,2")
  assert out.returncode == 0 and "win probability of players 1..2" in \
      out.stdout


def test_repr_names_the_game(solved):
  workdir, game = solved
  keys = game.w0.size // 3
  assert repr(game) == (f"SeatGame({workdir!r}, players=3, goal=500, "
                        f"rules='minimal', keys={keys})")
  assert keys == np.prod(game.seats.key_shape)


def test_turn_table_text_has_the_two_player_conventions(solved, tiny_runs):
  """A legend, six digits, 'B' after a cell that banks and '-' for one no
  rolls reach; by scores, a two-player game's table body is that of its
  two-player table (`queries.format_table`)."""
  _, game = solved
  table = game.table((300, 250, 0), t_last=450)
  lines = seat_game.format_table(table).splitlines()
  assert lines[0] == ("turn table scores 300,250,0 (player to move first)  "
                      "(W = win probability of the player to move; B = "
                      "bank, otherwise roll; - = unreachable)")
  assert lines[1] == ("win probabilities "
                      + " ".join(f"{w:.6f}" for w in table["win"]))
  assert lines[2].split() == ["t"] + [f"n={n}" for n in range(6, 0, -1)]
  first = table["rows"][0]["cells"][0]["win"][0]
  assert lines[3].split() == ["0", f"{first:.6f}"] + ["-"] * 5
  marks = {"B": 0, "-": 0}
  for line, row in zip(lines[3:], table["rows"]):
    cells = [line[7 + 11 * i:7 + 11 * i + 10] for i in range(6)]
    for text, cell in zip(cells, row["cells"]):
      if not cell["reachable"]:
        assert text == f"{'-':>10}"
        marks["-"] += 1
      else:
        mark = "B" if cell["action"] == "bank" else " "
        assert text == f"{cell['win'][0]:9.6f}{mark}"
        marks["B"] += mark == "B"
  assert marks["B"] and marks["-"]
  two = farkle_jax.load(tiny_runs("minimal")[3])
  for scores in ((0, 0), (450, 700)):
    ours = seat_game.format_turn_table(two, scores).splitlines()
    theirs = queries.format_table(two.turn_table(*scores)).splitlines()
    assert ours[2:] == theirs[1:]


def test_table_marks_what_no_rolls_reach(tiny_runs, seats_runs):
  """The same game solved by either engine marks the same states
  unreachable; past the mover's last total short of the goal, a state is
  reached when one roll from below lands on it."""
  seats = seat_game.SeatGame.load(seats_runs(2))
  two = farkle_jax.load(tiny_runs("minimal")[3])
  for scores in ((0, 0), (450, 700), (900, 0)):
    pair = two.table(scores)["rows"]
    ours = seats.table(scores, t_last=pair[-1]["t"])["rows"]
    assert [[c["reachable"] for c in r["cells"]] for r in ours] == [
        [c["reachable"] for c in r["cells"]] for r in pair]
  # At 900 of 1,000 play goes on from t = 0 and 50 only: at t = 100 six
  # dice would need all five of t = 50 to score 50, four dice come from a
  # 5 set aside there.
  row = seats.table((900, 0), t_last=100)["rows"][2]
  reach = {c["n"]: c["reachable"] for c in row["cells"]}
  assert row["t"] == 100 and not reach[6] and reach[4] and reach[5]


@pytest.mark.parametrize("scores", [(0, 0, 0), (300, 0, 450), (100, 250, 50),
                                    (400, 450, 0)])
def test_the_chances_to_bust_are_the_plain_references(solved, scores):
  """Every in-turn state of a key: the chance to bust from there and when
  rolling on, against a plain transcription of the policy over the
  reference's own three-player solution, to 1e-12."""
  _, game = solved
  ref_w0, _ = reference.solve_players(3, 500)
  want = reference.players_turn_bust(3, 500, ref_w0,
                                     tuple(s // 50 for s in scores))
  got = game.busts(game.turn(scores))
  assert not got.flags.writeable   # kept for every later asker
  assert not want.pop("ties") and len(want) == 6 * (10 - scores[0] // 50)
  for (t, n), (bust, rolling) in want.items():
    assert abs(got[t, n - 1, 0] - bust) < 1e-12, (t, n)
    assert abs(got[t, n - 1, 1] - rolling) < 1e-12, (t, n)


def _seat_turn_busts(game, scores, rng, policy) -> bool:
  """Whether one turn from the start, played by `game.advise` and
  `game.decision` (kept in `policy` by state and roll), ends in a
  farkle."""
  t, n, left = 0, 6, game.rules.goal - scores[0]
  while True:
    faces = tuple(sorted(rng.integers(1, 7, size=n).tolist()))
    if (t, n, faces) not in policy:
      best = (game.advise(scores, t, faces) or [None])[0]
      policy[t, n, faces] = (
          "farkle" if best is None else "stop" if best.t >= left
          or game.decision(scores, best.t, best.n)["best"] == "bank"
          else (best.t, best.n))
    move = policy[t, n, faces]
    if isinstance(move, str):
      return move == "farkle"
    t, n = move


def test_turns_played_by_the_advice_bust_as_often_as_shown(solved):
  """Turns played at random by the three-player advice farkle as often as
  the chance `advice` shows, within 4 standard errors; each choice's chance
  is the one of where it leads."""
  _, game = solved
  scores, runs, rng, policy = (100, 250, 50), 20_000, (
      np.random.default_rng(3)), {}
  want = game.advice(scores, 0, 6)["bust"]
  busts = sum(_seat_turn_busts(game, scores, rng, policy)
              for _ in range(runs))
  assert abs(busts / runs - want) < 4 * (want * (1 - want) / runs) ** 0.5
  rows = game.busts(game.turn(scores))
  adv = game.advice(scores, 0, roll=(1, 5, 2, 2, 4, 6))
  for c in adv["choices"]:
    assert c["bust"] == rows[c["t"] // 50, c["n"] - 1, 0]
  assert adv["then"]["bust"] == rows[adv["then"]["t"] // 50,
                                     adv["then"]["n"] - 1, 1] > 0
  text = seat_game.format_advice(game, scores, 0, (1, 5, 2, 2, 4, 6))
  assert f"{adv['choices'][0]['bust']:.4f}" in text.splitlines()[2]
  # A choice that reaches the goal ends the turn banked: no risk.
  wins = game.advice(scores, 0, roll=(1, 5, 3, 3, 3, 2))["choices"][0]
  assert wins["t"] >= 400 and wins["bust"] == 0.0


@pytest.fixture(scope="module")
def hands_three(tmp_path_factory):
  """Three players of the KCD rules to 300, each with a hand of their
  own: six loaded dice alike, one lucky die among five fair, six fair."""
  import importlib
  from farkle_jax.solver import driver
  config = importlib.import_module("farkle_jax.configs.kcd").get_config()
  config.rules.update(goal=300, players=3, hands=(
      (0.4, 0.2, 0, 0, 0.2, 0.2), ("lucky",), ()))
  workdir = str(tmp_path_factory.mktemp("hands_three"))
  driver.run(config, workdir)
  return seat_game.SeatGame.load(workdir)


ROTATIONS = ((0, 1, 2), (1, 2, 0), (2, 0, 1))


@pytest.mark.parametrize("hands", ROTATIONS)
def test_each_movers_turn_starts_from_their_own_hand(hands_three, hands):
  """Rolling the whole hand at t = 0 is worth the solved start values,
  for the mover of each hand: the turn reads its own hand's dice."""
  game = hands_three
  for scores in [(0, 0, 0), (100, 250, 50)]:
    w = game.win_probabilities(scores, hands)
    d = game.decision(scores, 0, 6, hands)
    assert d["best"] == "roll" and d["bank"] is None
    np.testing.assert_allclose(d["roll"], w, rtol=0, atol=1e-13)
    table = game.table(scores, hands)
    assert len(table["rows"][0]["cells"]) == len(
        game.seats.hand_states(hands[0]))
  assert game.win_probabilities((0, 0, 0)).tolist() == (
      game.win_probabilities((0, 0, 0), ROTATIONS[0]).tolist())


def test_a_roll_is_read_as_the_movers_dice(hands_three):
  """The lucky die is A in the second hand; the first hand's dice are
  alike (one kind, A) and never show 3."""
  game = hands_three
  choices = game.advise((0, 0, 0), 0, ("A1", "B5", "B3", "B3", "B2", "B4"),
                        (1, 2, 0))
  assert choices and all(a.win[0] >= b.win[0]
                         for a, b in zip(choices, choices[1:]))
  assert all(abs(sum(c.win) - 1) < 1e-12 for c in choices)
  with pytest.raises(PositionError, match="die A never shows 3"):
    game.advise((0, 0, 0), 0, (1, 5, 3, 3, 2, 6), (0, 1, 2))


def test_three_hands_play_a_game_by_the_advice(hands_three):
  """Each seat plays its own dice: following the advice gives nothing
  away and the winner reaches the goal."""
  from farkle_jax.strategy import match
  from test_match import _best_person, _play
  game = hands_three
  s = match.start(game)
  assert s.key[3:] == (0, 1, 2) and s.n == 6
  computer = match.Computer(game)
  for seed in range(3):
    s = _play(game, computer, match.Dice(seed, game.rules), _best_person)
    total, _ = match.summary(s)
    assert total < 1e-12
    assert match.scores(game, s)[s.winner] >= 300


def test_a_web_game_of_three_hands_ends(hands_three):
  """The web game's API over the same run: games end, and each mover
  rolls their own dice (computer 1's lucky hand by letter)."""
  ends = play_web_games(hands_three, range(3), first="computer")
  # Computer 1 holds the lucky hand: its fair dice are B.
  assert any(line.startswith("computer 1 rolled") and "B" in line
             for g in ends for line in g["log"])


def test_the_opening_of_three_hands_deals_player_i_hand_i(hands_three):
  """The run's seat wins are those of the game's start: player 1 with
  hand 1 to move, then players 2 and 3 with hands 2 and 3 (not everyone
  with hand 1)."""
  game = hands_three
  np.testing.assert_allclose(game.summary["seat_win"],
                             game.w0[0, 0, 0, 0, 1, 2], rtol=0, atol=1e-15)
  # (Hand 1, six loaded dice, wins from the start 99.96% either way.)
  assert np.abs(game.w0[0, 0, 0, 0, 1, 2] - game.w0[0, 0, 0, 0, 0, 0]
                ).max() > 1e-5
