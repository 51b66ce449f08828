"""The terminal game, played through a pseudo-terminal with scripted
answers."""

import io
import os
import re
import sys

import pexpect
import pytest

from conftest import ROOT

# pexpect forks this (JAX-threaded) process only to exec the game at once,
# so the fork cannot deadlock on JAX's threads.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

KEEP = r"keep which\? \[1-(\d+) or the faces\] "
BANK = r"\[b\]ank or \[r\]oll\? "
TYPED = r"type the faces: "


def _spawn(*args):
  return pexpect.spawn(sys.executable, ["-m", "farkle_jax.apps.play", *args],
                       cwd=ROOT, env=dict(os.environ), encoding="utf-8",
                       timeout=120)


def test_a_whole_game_with_feedback_and_a_report():
  child = _spawn("--shipped", "default", "--seed", "5", "--opponent",
                 "bank:300")
  child.expect("against the computer playing bank:300")
  answers = {"keep": 0, "bank": 0}
  refused = False
  while True:
    i = child.expect([KEEP, BANK, r"game over: (you|computer) won"])
    if i == 2:
      break
    if i == 0 and not refused:   # a wrong answer first: asked again
      child.sendline("99")
      child.expect(r"\? 99: answer 1-\d+ or the faces to keep")
      child.expect(KEEP)
      refused = True
    if i == 0:
      answers["keep"] += 1
      child.sendline(child.match.group(1))   # the last option: few points
    else:
      answers["bank"] += 1
      child.sendline("b" if answers["bank"] % 2 else "r")
    child.expect(r"-> .*: win probability (\d\.\d{4}) \((best|gave away "
                 r"(\d\.\d{4}); best: .* (\d\.\d{4}))\)")
    made = float(child.match.group(1))
    if child.match.group(3):
      loss, best = float(child.match.group(3)), float(child.match.group(4))
      assert abs(best - made - loss) <= 2e-4
  child.expect(r"You made (\d+) decisions and gave away (\d\.\d{4}) win "
               r"probability in all\.")
  assert int(child.match.group(1)) == answers["keep"] + answers["bank"]
  given = float(child.match.group(2))
  assert given > 0      # the last option and alternate banks are not best
  child.expect(pexpect.EOF)
  losses = [float(x) for x in re.findall(r"  \d\. turn \d+, .*, -(\d\.\d{4})",
                                         child.before)]
  assert 1 <= len(losses) <= 3
  assert losses == sorted(losses, reverse=True)
  assert sum(losses) <= given + 2e-4
  child.close()
  assert child.exitstatus == 0


def test_typed_dice_and_quitting():
  child = _spawn("--shipped", "default", "--dice", "typed")
  child.expect(TYPED)
  child.sendline("1 2 3")
  child.expect(r"\? roll 1,2,3: 3 dice, but n=6 dice are to roll")
  child.sendline("1,5,3,3,3,2")
  child.expect(KEEP)
  child.sendline("3 3 3 1")
  child.expect(r"-> keep 3 3 3 1 \(400\)")
  child.expect(BANK)
  child.sendline("r")
  child.expect(r"roll 2 dice and type the faces: ")
  child.sendline("q")
  child.expect("game abandoned")
  child.expect(pexpect.EOF)
  child.close()
  assert child.exitstatus == 0


def test_unknown_opponent_is_one_line():
  child = _spawn("--opponent", "genius")
  child.expect(pexpect.EOF)
  child.close()
  text = child.before
  assert child.exitstatus == 2
  assert re.search(r"error: strategy 'genius' is not allowed", text)
  assert "Traceback" not in text


def test_a_whole_game_against_two_computers(seats_runs):
  """Three players (minimal rules to 1,000): the turns go round the table,
  every decision is scored, and one seat wins."""
  child = _spawn("--workdir", seats_runs(3), "--seed", "3")
  child.logfile_read = io.StringIO()   # the whole game, for the end
  child.expect("against 2 computers playing optimal")
  child.expect(r"-- turn 1: you 0, computer 1 0, computer 2 0 "
               r"\(goal 1000\)")
  decisions = 0
  while True:
    i = child.expect([KEEP, BANK, r"game over: (you|computer [12]) won"])
    if i == 2:
      break
    child.sendline("1" if i == 0 else "b")
    decisions += 1
    child.expect(r"-> .*: win probability \d\.\d{4}")
  child.expect(rf"You made {decisions} decisions")
  child.expect(pexpect.EOF)
  child.close()
  assert child.exitstatus == 0
  shown = child.logfile_read.getvalue()
  for seat in ("you", "computer 1", "computer 2"):
    assert f"\n{seat} rolled " in shown.replace("\r", "")


def test_three_players_play_the_final_round(tmp_path):
  """Minimal rules to 500 with a final round (cap 1,000): after a bank at
  the goal each other player has a last turn against the bar, and the
  holder of the bar wins."""
  from farkle_jax.solver import configuration, driver
  config = configuration.base("minimal")
  config.rules.update(goal=500, players=3, final_round=True,
                      final_round_cap=1000)
  driver.run(config, str(tmp_path))
  child = _spawn("--workdir", str(tmp_path), "--seed", "3")
  child.logfile_read = io.StringIO()
  while True:
    i = child.expect([KEEP, BANK, r"game over: (you|computer [12]) won"])
    if i == 2:
      break
    child.sendline("1" if i == 0 else "b")
  child.expect(pexpect.EOF)
  child.close()
  assert child.exitstatus == 0
  shown = child.logfile_read.getvalue().replace("\r", "")
  assert "you banked 500: 500 points, the bar for the last turns" in shown
  assert "(goal 500; last turn: beat 500)" in shown
  assert "computer 2 rolled 4: farkle; you won" in shown


def test_more_players_refuse_a_catalog_opponent_in_one_line(seats_runs):
  child = _spawn("--workdir", seats_runs(3), "--opponent", "bank:300")
  child.expect(pexpect.EOF)
  child.close()
  assert child.exitstatus == 2, child.before
  assert "the computer plays optimal only" in child.before
  assert "Traceback" not in child.before
