"""The N-player explorer in a real headless browser: advice for a roll and
the turn table from every player's score, and a game against two computers. Its own module: one Playwright
session per module (the two-player page's is closed by then)."""

import re

import pytest

from test_browser import _shot, browsing, play_to_the_end, serving


@pytest.fixture(scope="module")
def seats_page(three_players):
  """The explorer over a solved three-player game, in the browser."""
  with serving("--workdir", three_players) as url, browsing(url) as page:
    yield page


def test_three_players_table_and_advice(seats_page):
  """The page of the two-player test, with a score field per player and a
  win probability per player."""
  page = seats_page
  page.wait_for_selector("#rules:has-text('seat 3 wins')")
  assert "3 players" in page.inner_text("#rules")
  page.wait_for_selector("#table-grid td.cell")
  assert page.locator("#table-form input.score").count() == 3
  scores = page.locator("#table-form input.score")
  scores.nth(0).fill("200")
  scores.nth(1).fill("250")
  scores.nth(2).fill("300")
  page.click("#table-go")
  page.wait_for_selector("#table-grid td.cell.bank")
  assert page.locator("#table-grid td.cell.roll").count() > 5
  page.hover("#table-grid td.cell.roll >> nth=0")
  assert "player 3" in page.inner_text("#hover")
  _shot(page, "three_players_table.png")
  scores.nth(2).fill("900")
  page.click("#table-go")
  page.wait_for_selector("#table-error:has-text('score=900')")
  page.click("#tab-advice")
  advice = page.locator("#advice-form input.score")
  advice.nth(1).fill("250")
  advice.nth(2).fill("300")
  page.fill("#advice-roll", "1,5,3,3,3,2")
  page.click("#advice-go")
  page.wait_for_selector("#advice-result tr.choice")
  assert page.locator("#advice-result tr.choice").count() >= 4
  assert "player 3" in page.inner_text("#advice-result")
  assert "Then, at" in page.inner_text("#decision")
  _shot(page, "three_players_advice.png")


def test_a_game_against_two_computers_is_played_to_the_end(seats_page):
  page = seats_page
  page.click("#tab-play")
  page.select_option("#play-form [name=first]", "computer")
  page.fill("#play-form [name=seed]", "38")   # both computers move first
  page.click("#new-game")
  page.wait_for_selector("#scoreboard:has-text('goal 500')")
  board = page.inner_text("#scoreboard")
  assert "You 0" in board and "computer 1" in board and "computer 2" in board
  log = page.inner_text("#log")
  assert "computer 1 rolled" in log and "computer 2 rolled" in log
  text = play_to_the_end(page, "three_players_play_turn.png")
  assert "gave away" in text
  assert re.search(r"Game over: (you|computer( \d)?) won\.", text), text
  assert "you rolled" in page.inner_text("#log")
  assert "You made 0 decisions" not in text
  _shot(page, "three_players_play.png")
