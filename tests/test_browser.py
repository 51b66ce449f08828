"""The web explorer in a real headless browser (Chromium under Playwright):
the page loads, a turn table renders, a roll gets advice, and a game is
played to its end. Screenshots go to $FARKLE_JAX_SCREENSHOTS when set
(experiments/results/web holds the ones in the README).

Needs Debian's chromium (`.ci/run` installs it). Without it the test is
skipped, unless FARKLE_JAX_REQUIRE_BROWSER=1 (as in CI) makes that a failure.
"""

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

if not os.path.exists(CHROMIUM):
  if os.environ.get("FARKLE_JAX_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"no chromium at {CHROMIUM}: apt-get install chromium")
  pytest.skip("no chromium (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


@contextlib.contextmanager
def serving(*source: str):
  """`python -m farkle_jax.apps.serve` with `source` flags on a free port, up
  and answering; yields its URL."""
  port = _free_port()
  proc = subprocess.Popen(
      [sys.executable, "-m", "farkle_jax.apps.serve", *source, "--port",
       str(port)], cwd=ROOT, env=dict(os.environ),
      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
  url = f"http://127.0.0.1:{port}"
  try:
    for _ in range(600):
      try:
        urllib.request.urlopen(url + "/api/info", timeout=1)
        break
      except OSError:
        if proc.poll() is not None:
          raise RuntimeError(proc.stdout.read())
        time.sleep(0.1)
    yield url
  finally:
    proc.terminate()
    proc.wait(timeout=30)


@contextlib.contextmanager
def browsing(url: str):
  """A headless Chromium page at `url`; no page errors allowed."""
  with sync_api.sync_playwright() as p:
    browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    yield page
    browser.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def server():
  with serving("--shipped", "default") as url:
    yield url


@pytest.fixture(scope="module")
def page(server):
  with browsing(server) as page:
    yield page


def _shot(page, name):
  where = os.environ.get("FARKLE_JAX_SCREENSHOTS")
  if where:
    os.makedirs(where, exist_ok=True)
    page.screenshot(path=os.path.join(where, name), full_page=True)


def test_page_loads_and_the_table_renders(page):
  page.wait_for_selector("#table-grid td.cell")
  assert "first player wins 56.28%" in page.inner_text("#rules")
  assert page.locator("#table-grid td.cell.roll").count() > 20
  assert page.locator("#table-grid td.cell.bank").count() > 20
  page.locator("#table-form input.score").nth(0).fill("1000")
  page.locator("#table-form input.score").nth(1).fill("2000")
  page.click("#table-go")
  page.wait_for_function(
      "document.querySelector('#table-grid td.cell.bank')"
      " && document.querySelector('#table-grid td.cell').dataset.t === '0'")
  page.hover("#table-grid td.cell.roll >> nth=3")
  assert "win probability 0." in page.inner_text("#hover")
  _shot(page, "table.png")
  page.locator("#table-form input.score").nth(0).fill("3100")
  page.click("#table-go")
  page.wait_for_selector("#table-error:has-text('b=3100')")


def test_a_roll_gets_ranked_advice(page):
  page.click("#tab-advice")
  page.locator("#advice-form input.score").nth(0).fill("0")
  page.locator("#advice-form input.score").nth(1).fill("0")
  for face in (6, 5, 3, 3, 3, 2):
    page.click(f".die-add[data-face='{face}']")
  assert page.input_value("#advice-roll") == "6,5,3,3,3,2"
  page.click("#advice-go")
  page.wait_for_selector("#advice-result tr.choice")
  rows = page.locator("#advice-result tr.choice")
  assert rows.count() == 3
  assert rows.nth(0).locator("td").nth(1).inner_text() == "5"
  assert "roll" in page.inner_text("#decision")
  assert "not allowed yet" in page.inner_text("#decision")
  _shot(page, "advice.png")
  page.fill("#advice-roll", "6,5,7")
  page.fill("#advice-form [name=n]", "3")
  page.click("#advice-go")
  page.wait_for_selector("#advice-error:has-text('faces are 1..6')")


def play_to_the_end(page, shot_name: str) -> str:
  """Plays the game on the page to its end (first option, bank two turns
  in three); returns the game-over text."""
  shot = False
  for step in range(400):
    if page.is_visible("#game-over"):
      break
    before = page.inner_text("#log")
    if page.locator("#options button").count():
      if step > 2 and not shot:
        _shot(page, shot_name)
        shot = True
      page.locator("#options button").first.click()
    elif page.is_enabled("#bank") and step % 3:
      page.click("#bank")
    else:
      page.click("#roll")
    page.wait_for_function(
        "before => document.querySelector('#log').innerText !== before"
        " || !document.querySelector('#game-over').hidden", arg=before)
    if step == 1:
      assert "win probability" in page.inner_text("#feedback")
  assert page.is_visible("#game-over")
  return page.inner_text("#game-over")


def test_a_game_is_played_to_the_end(page):
  page.click("#tab-play")
  page.fill("#opponent", "bank:300")
  page.fill("#play-form [name=seed]", "3")
  page.click("#new-game")
  page.wait_for_selector("#scoreboard:has-text('goal 3000')")
  text = play_to_the_end(page, "play_turn.png")
  assert "gave away" in text
  assert re.search(r"Game over: (you|computer( \d)?) won\.", text), text
  _shot(page, "play.png")



def test_the_dice_tab_solves_each_players_dice(tmp_path_factory, tmp_path,
                                               page, server):
  """Player 2 takes a lucky die in the Dice tab; once solved, this page's
  table of a mover with that hand names the dice left by letter, while the
  server's main run (what every other page shows) is as it was."""
  import importlib
  import json
  from conftest import solved_once
  config = importlib.import_module("configs.kcd").get_config()
  config.rules.goal = 300
  run = solved_once(tmp_path_factory, "kcd_300", config)
  with serving("--workdir", run, "--solve_dir", str(tmp_path)) as url:
    try:
      page.goto(url)
      page.wait_for_selector("#table-grid td.cell")
      page.click("#tab-dice")
      page.fill("[name=hand2]", "lucky")
      page.click("#dice-go")
      page.wait_for_function("document.getElementById('dice-status')"
                             ".textContent.startsWith('solved')",
                             timeout=120_000)
      assert page.is_visible("#dice-main")
      page.click("#tab-table")
      page.locator("#table-form select.count").first.select_option(
          index=1)          # hand 2, the lucky one
      page.click("#table-go")
      page.wait_for_selector("#table-grid th:has-text('n=ABBBBB')")
      assert "lucky" in page.inner_text("#table-grid caption")
      main = json.load(urllib.request.urlopen(url + "/api/info"))
      assert not main["rules"].get("hands") and main["run"] == "main"
      page.click("#tab-dice")
      page.click("#dice-main")    # back to the server's dice
      page.wait_for_selector("#dice-status:has-text('own dice again')")
      page.click("#tab-table")
      page.click("#table-go")
      page.wait_for_selector("#table-grid th:has-text('n=6')")
    finally:
      page.goto(server)     # the other tests' page
