"""One check of a position and a roll for every kind of run: the same
inputs get the same class of answer (a value, or a refusal: 4xx / exit 2)
from a two-player run, a three-player run and a run where each player holds
their own hand, through the command line and the API; never exit 0 on a
position play cannot reach, never exit 3 or a 500.

What is reachable is decided here independently of the package: by the
plain scorer of tests/reference.py, a turn from t = 0 with six dice.
"""

import functools
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.testclient import TestClient

import reference
from conftest import CommandLines, solved_once
from farkle_jax.apps import explorer
from farkle_jax.solver import configuration
from farkle_jax.strategy import match, positions
from farkle_jax.strategy.positions import PositionError
import farkle_jax

GOAL, STEP = 500, 50
KINDS = ("two", "three", "hands")


def _config(**rules):
  config = configuration.base("minimal")
  config.rules.update(goal=GOAL, **rules)
  config.solver.update(tol=1e-14, norm="absolute")
  return config


@pytest.fixture(scope="module")
def runs(tmp_path_factory, three_players):
  """Workdirs of minimal rules to 500: two players, three players, and two
  players where the first holds six fair dice and the second a lucky die
  and five fair ones (`rules.hands`)."""
  return {
      "two": solved_once(tmp_path_factory, "positions_two",
                         _config(players=2)),
      "three": three_players,
      "hands": solved_once(tmp_path_factory, "positions_hands",
                           _config(hands=((), ("lucky",)))),
  }


@pytest.fixture(scope="module")
def games(runs):
  return {k: farkle_jax.load(w) for k, w in runs.items()}


@pytest.fixture(scope="module")
def clients(games):
  return {k: TestClient(explorer.create_app(g), base_url="http://127.0.0.1")
          for k, g in games.items()}


@pytest.fixture(scope="module")
def commands():
  """advise and table, each line in one worker process (no config flag: a
  line leaves nothing for the next but what it compiled)."""
  lines = CommandLines(fork=False)
  yield {m: (lambda *args, m=m: _as_dict(lines(f"farkle_jax.apps.{m}",
                                                *args)))
         for m in ("advise", "table")}
  lines.close()


def _as_dict(out) -> dict:
  return {"code": out.returncode, "stdout": out.stdout, "stderr": out.stderr}


# The oracle: the plain scorer's ways to set dice aside, and the turn
# states they reach.
@functools.lru_cache(maxsize=None)
def _keeps(n: int) -> frozenset:
  """(points, dice to roll next) of every way to set dice aside from some
  roll of n fair dice."""
  out = set()
  for roll in itertools.combinations_with_replacement(range(1, 7), n):
    for k in range(1, n + 1):
      for kept in itertools.combinations(roll, k):
        counts = tuple(kept.count(f) for f in range(1, 7))
        points = reference.best_points("minimal", counts)
        if points > reference.NEG:
          out.add((int(points), 6 if k == n else n - k))
  return frozenset(out)


@functools.lru_cache(maxsize=None)
def _reachable() -> frozenset:
  """(t, n): turn totals below the goal with n dice to roll that a turn
  from (0, 6) reaches."""
  seen, todo = {(0, 6)}, [(0, 6)]
  while todo:
    t, n = todo.pop()
    for points, nxt in _keeps(n):
      state = (t + points, nxt)
      if state[0] < GOAL and state not in seen:
        seen.add(state)
        todo.append(state)
  return frozenset(seen)


def _die_ok(x) -> bool:
  return (x in range(1, 7) if isinstance(x, int)
          else x[0] == "A" and x[1] in "123456")


def expected(players: int, scores, t, n, roll) -> str:
  """'value' or 'refused', decided by the rules alone."""
  if len(scores) != players or any(
      s % STEP or not 0 <= s < GOAL for s in scores):
    return "refused"
  if roll is not None:
    if not 1 <= len(roll) <= 6 or not all(map(_die_ok, roll)):
      return "refused"
    if n is not None and n != len(roll):
      return "refused"
    n = len(roll)
  n = 6 if n is None else n
  if t % STEP or t < 0 or scores[0] + t >= GOAL:
    return "refused"
  return "value" if (t, n) in _reachable() else "refused"


_SCORE = st.sampled_from(range(0, GOAL, STEP))
_FACE = st.one_of(st.integers(1, 6), st.integers(0, 7),
                  st.sampled_from(["A1", "A5", "B2", "A9"]))
_CASE = st.fixed_dictionaries({
    "mover": st.one_of(_SCORE, st.sampled_from([-50, 25, GOAL, 10**15])),
    "others": st.lists(_SCORE, min_size=1, max_size=3),
    "t": st.one_of(st.sampled_from(range(0, GOAL + 100, STEP)),
                   st.sampled_from([-50, 25, 10**20])),
    "n": st.one_of(st.none(), st.integers(0, 7)),
    "roll": st.one_of(st.none(), st.lists(_FACE, min_size=0, max_size=7)),
})
PLAYERS = {"two": 2, "three": 3, "hands": 2}


def _query(case, players: int):
  """(scores, t, n, roll) of a case for a run of `players`: the other
  players' scores cut or padded to fit, now and then one too many."""
  others = (case["others"] * 3)[:players - 1]
  if len(case["others"]) == 3 and players == 2:
    others = case["others"]   # too many scores: refused everywhere
  return ([case["mover"]] + others, case["t"], case["n"], case["roll"])


def _api_class(client, scores, t, n, roll) -> str:
  params = {"scores": ",".join(map(str, scores)), "t": str(t)}
  if n is not None:
    params["n"] = str(n)
  if roll is not None:
    params["roll"] = ",".join(map(str, roll))
  got = client.get("/api/advice", params=params)
  assert got.status_code == 200 or 400 <= got.status_code < 500, (
      got.status_code, got.text)
  if got.status_code != 200:
    assert "\n" not in got.json()["error"]
  return "value" if got.status_code == 200 else "refused"


def _cli_class(run, workdir, scores, t, n, roll, by_key=False) -> str:
  """The class of `advise`'s answer, the position given by --scores, or
  `by_key` by a two-player run's --b and --d."""
  where = (["--b", str(scores[0]), "--d", str(scores[1])] if by_key else
           ["--scores", ",".join(map(str, scores))])
  args = ["--workdir", workdir, *where, "--t", str(t), "--json"]
  if n is not None:
    args += ["--n", str(n)]
  if roll is not None:
    args += ["--roll=" + ",".join(map(str, roll))]
  out = run(*args)
  assert out["code"] in (0, 2), out
  assert "Traceback" not in out["stderr"]
  if out["code"] == 2:
    lines = [l for l in out["stderr"].splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out
  return "value" if out["code"] == 0 else "refused"


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(case=_CASE)
def test_the_same_inputs_get_the_same_answer_everywhere(case, runs, clients,
                                                        commands):
  for kind in KINDS:
    scores, t, n, roll = _query(case, PLAYERS[kind])
    want = expected(PLAYERS[kind], scores, t, n, roll)
    api = _api_class(clients[kind], scores, t, n, roll)
    cli = _cli_class(commands["advise"], runs[kind], scores, t, n, roll)
    assert (api, cli) == (want, want), (kind, scores, t, n, roll)
    if len(scores) == 2:   # the two-player flags too
      cli = _cli_class(commands["advise"], runs[kind], scores, t, n, roll,
                       by_key=True)
      assert cli == want, (kind, "--b --d", scores, t, n, roll)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(mover=st.one_of(_SCORE, st.sampled_from([-50, 10**15])),
       t_max=st.one_of(st.none(), st.sampled_from(
           [-50, 0, 100, GOAL, GOAL + STEP, 99_999_999_999_999])))
def test_tables_are_refused_alike_past_the_goal(mover, t_max, runs, clients,
                                                commands):
  ok = 0 <= mover < GOAL and (t_max is None or 0 <= t_max <= GOAL)
  for kind in KINDS:
    scores = ",".join(map(str, [mover] + [0] * (PLAYERS[kind] - 1)))
    params = {"scores": scores} | ({} if t_max is None else
                                   {"t_max": str(t_max)})
    api = clients[kind].get("/api/table", params=params).status_code
    args = ["--workdir", runs[kind], "--scores", scores, "--json"]
    out = commands["table"](*args + ([] if t_max is None
                                     else [f"--t_max={t_max}"]))
    assert (api == 200, out["code"]) == (ok, 0 if ok else 2), (kind, out)
    assert ok or 400 <= api < 500


def test_the_oracle_agrees_with_the_check_on_every_state(games):
  """Every (t, n) below the goal: reachable by the plain scorer exactly
  when the package's check lets it through, for every kind of run."""
  for kind, game in games.items():
    for t in range(0, GOAL, STEP):
      for n in range(1, 7):
        try:
          game.advice((0,) * game.players, t, n)
          got = True
        except PositionError:
          got = False
        assert got == ((t, n) in _reachable()), (kind, t, n)


@pytest.mark.parametrize("kind", KINDS)
def test_a_roll_of_other_dice_than_those_to_roll_is_refused_in_play(games,
                                                                    kind):
  """The match against the computer (the web game, `play --dice typed`):
  a roll of one die, or of too many, when six are to roll."""
  game = games[kind]
  s = match.start(game, match.PERSON)
  for dice in ((1,), (5, 5), (1, 1, 1, 1, 1, 1, 1), (0, 1, 2, 3, 4, 5)):
    with pytest.raises(PositionError):
      match.roll(game, s, dice)
  s = match.roll(game, s, (1, 5, 2, 3, 4, 6))
  s = match.keep(game, s, (1,))
  assert (s.t, s.n) == (100, 5)
  if s.phase == "decide":
    s = match.decide(game, s, "roll")
  for dice in ((1,), (1, 5, 2, 3, 4, 6)):
    with pytest.raises(PositionError, match="dice"):
      match.roll(game, s, dice)


def test_the_issues_cases_from_the_command_line(runs, commands):
  advise, table = commands["advise"], commands["table"]
  three, hands = runs["three"], runs["hands"]
  cases = [
      (advise, ["--workdir", three, "--scores", "0,0,0", "--t", "100",
                "--n", "3", "--roll", "1,5"], "2 dice, but n=3"),
      (advise, ["--workdir", three, "--scores", "0,0,0", "--t", "50",
                "--n", "6"], "cannot be reached"),
      (table, ["--workdir", three, "--scores", "0,0,0",
               "--t_max", "99999999999999"], "to the goal 500"),
      (advise, ["--workdir", three, "--scores", "0,0,0", "--roll",
                "B1,A5"], "faces are 1..6"),
      (advise, ["--workdir", hands, "--hands", "3,1"], "--hands=3,1"),
      (advise, ["--workdir", hands, "--f", "1"], "give --hands"),
      (advise, ["--workdir", hands, "--scores", "0,0", "--hands", "1,3"],
       "--hands=1,3"),
      (advise, ["--workdir", hands, "--scores", "0,0", "--counts", "0,1"],
       "give --hands"),
      (table, ["--workdir", hands, "--hands", "1"], "2 hand numbers"),
      (table, ["--workdir", hands, "--e", "1"], "give --hands"),
      (table, ["--workdir", three, "--hands", "1,2"], "--hands: for a two"),
  ]
  for run, args, words in cases:
    out = run(*args)
    assert out["code"] == 2, out
    assert words in out["stderr"] and "Traceback" not in out["stderr"], out
  ok = advise("--workdir", three, "--scores", "0,0,0", "--roll",
              "A1,A5,A2,A3,A4,A6", "--json")
  assert ok["code"] == 0, ok
  got = json.loads(ok["stdout"])   # read as the faces of dice alike
  assert got["dice"] == [1, 5, 2, 3, 4, 6]
  assert sorted(c["kept"] for c in got["choices"]) == [[1], [5], [5, 1]]


def test_the_web_answers_the_issues_cases_with_a_4xx(clients):
  for kind, client in clients.items():
    zero = ",".join(["0"] * PLAYERS[kind])
    for params in ({"scores": zero, "t": "100", "n": "3", "roll": "1,5"},
                   {"scores": zero, "t": "50", "n": "6"},
                   {"scores": zero, "roll": "B1,A5"},
                   {"scores": zero, "counts": zero.replace("0", "2")},
                   {"scores": zero, "roll": "1" * 200}):
      got = client.get("/api/advice", params=params)
      assert got.status_code == 400, (kind, params, got.text)
      error = got.json()["error"]
      assert "Error" not in error and "unpack" not in error, error


def test_positions_module_refuses_huge_inputs_in_one_line():
  for text in ("1" * 10_000, ",".join(["1"] * 10_000), "9" * 5000):
    with pytest.raises(PositionError) as err:
      positions.parse_dice(text)
    assert len(str(err.value)) < 300
    with pytest.raises(PositionError) as err:
      positions.parse_scores(text)
    assert len(str(err.value)) < 300


def test_a_game_reads_dice_states_as_states_where_the_dice_differ(
    tmp_path_factory):
  """In play (the match, the web game) n is the layout's dice state: with
  one hand of three kinds, state 6 is five dice of the hand, not the whole
  hand that a person's n = 6 names. Every reachable state of the opening
  turn: the decision read by the game is the turn pass's own value."""
  from test_dice import HAND_DICE, _kcd
  from farkle_jax.solver import queries
  config = _kcd(goal=300, dice=HAND_DICE)
  config.solver.tol = 1e-15
  game = farkle_jax.load(solved_once(tmp_path_factory, "kcd_hand", config))
  lay, key = game.layout, (0, 0, 0, 0)
  assert lay.dice_states > 6 and lay.dice_labels[5] != lay.dice_labels[-1]
  turn = game.turns.of(int(lay.key_index(*key)))
  reach = queries.reachable(lay, game.run.roll, 0)
  assert reach[:, 5].any()   # state 6 is reached
  for t, n in zip(*reach.nonzero()):
    dec = game.decision_at(key, int(t) * lay.unit, int(n) + 1)
    assert dec.roll == pytest.approx(float(turn.roll[t, n]), abs=1e-15)
