// Loaded before app.js: the API call, the number and dice formats, and the
// game against the computer for any number of players
// (farkle_jax.apps.web_games).
"use strict";

const FACES = ["", "\u2680", "\u2681", "\u2682", "\u2683", "\u2684", "\u2685"];
let game = null;
// The served run this page shows: the server's main one, or the one its
// Dice tab solved (other pages keep theirs).
let run = "main";

function runQuery(sep) { return run === "main" ? "" : `${sep}run=${run}`; }

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body)};
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function pct(w) { return (100 * w).toFixed(2) + "%"; }
// Dice that differ come as 'A1'-style faces: shown as they are.
function dice(faces) {
  return faces.map(f => typeof f === "number" ? FACES[f] : f).join(" ");
}

// Playing the computer.
async function newGame(event) {
  event.preventDefault();
  const form = new FormData(document.getElementById("play-form"));
  const seed = form.get("seed");
  await play(() => api("/api/games", {
      opponent: form.get("opponent"), first: form.get("first"),
      seed: seed === "" ? null : Number(seed), run: run}));
}

async function play(request) {
  const error = document.getElementById("play-error");
  error.textContent = "";
  try {
    game = await request();
    renderGame();
  } catch (e) {
    error.textContent = e.message;
  }
}

function move(body) {
  return play(() => api(`/api/games/${game.id}`, body));
}

function renderGame() {
  document.getElementById("game").hidden = false;
  const seats = game.names.map((name, i) => (i ? name : "You") + " " +
      game.scores[i]).join(" \u2014 ");
  document.getElementById("scoreboard").textContent =
      `${seats} (computer: ${game.opponent}), goal ${game.goal}. ` +
      `Turn ${game.turn}` + (game.phase === "over" ? "." :
      `, ${game.mover === "you" ? "yours" : game.mover}: turn total ` +
      `${game.t}, ${game.left}.`) +
      (game.bar && game.phase !== "over" ? ` Last turn: beat ${game.bar}` +
       (game.ties_shared ? " (ties share the win)." : ".") : "");
  document.getElementById("dice").textContent = dice(game.dice);
  const options = document.getElementById("options");
  options.innerHTML = "";
  for (const o of game.options) {
    const b = document.createElement("button");
    b.className = "option";
    b.textContent = `keep ${o.dice.join(" ")} \u2192 ${o.points} points ` +
                    `(total ${o.t}, ${o.left})`;
    b.onclick = () => move({action: "keep", dice: o.dice});
    options.appendChild(b);
  }
  document.getElementById("roll").disabled =
      !(game.phase === "roll" || game.phase === "decide");
  document.getElementById("bank").disabled = game.phase !== "decide";
  const m = game.last_move, fb = document.getElementById("feedback");
  fb.textContent = m ? `Your last move, ${m.made}: win probability ` +
      `${pct(m.made_win)}; best, ${m.best}: ${pct(m.best_win)}` +
      (m.loss > 5e-10 ? ` (gave away ${pct(m.loss)})` : " \u2014 best.") : "";
  fb.className = "feedback " + (m && m.loss > 5e-10 ? "cost" : "best");
  document.getElementById("log").innerHTML = game.log.slice(-40).map(
      line => `<li>${line}</li>`).join("");
  const over = document.getElementById("game-over");
  over.hidden = game.phase !== "over";
  if (game.phase === "over") {
    const worst = game.costliest.map(c => `<li>${c.where}: ${c.made} ` +
        `(${pct(c.made_win)}) instead of ${c.best} (${pct(c.best_win)}), ` +
        `\u2212${pct(c.loss)}</li>`).join("");
    over.innerHTML = `<h2>Game over: ${game.result}.</h2><p>You made ` +
        `${game.decisions} decisions and gave away ${pct(game.given_away)} ` +
        `win probability in all.</p>` + (worst ? `<p>Your costliest ` +
        `decisions:</p><ol>${worst}</ol>` : "<p>Every decision was a best one.</p>");
  }
}

// The panel: who the computer plays (a catalog strategy against one
// player, optimal against more), who starts, the seed; then the game.
function panelHtml(about) {
  const names = about.opponents.flatMap(o => o === "bank:X" ?
      ["bank:300", "bank:500"] : o.includes("..") ? [] : [o]);
  const opponent = names.length > 1 ?
      `<label>computer plays <input id="opponent" name="opponent" ` +
      `value="optimal" list="opponents"></label><datalist id="opponents">` +
      names.map(o => `<option value="${o}">`).join("") + "</datalist>" :
      `<input type="hidden" name="opponent" value="optimal">`;
  const other = (about.players || 2) > 2 ? "computer 1" : "computer";
  return `<form id="play-form" class="scores">${opponent}
    <label>first <select name="first"><option value="human">you</option>
      <option value="computer">${other}</option></select></label>
    <label>seed <input name="seed" type="number" placeholder="random"></label>
    <button id="new-game" type="submit">New game</button></form>
  <p id="play-error" class="error"></p>
  <div id="game" hidden>
    <p id="scoreboard" class="scoreboard"></p>
    <p id="dice" class="dice"></p>
    <div id="options"></div>
    <p class="actions"><button id="roll" type="button">Roll</button>
      <button id="bank" type="button">Bank</button></p>
    <p id="feedback" class="feedback"></p>
    <div id="game-over" hidden></div>
    <h3>what happened</h3>
    <ol id="log" class="log"></ol>
  </div>`;
}

// (Again when the page changes run: the computer's strategies differ.)
async function startGames() {
  const panel = document.getElementById("panel-play");
  if (!panel) return;
  const about = await api("/api/info" + runQuery("?"));
  panel.innerHTML = panelHtml(about);
  document.getElementById("play-form").onsubmit = newGame;
  document.getElementById("roll").onclick = () => move({action: "roll"});
  document.getElementById("bank").onclick = () => move({action: "bank"});
}

startGames();
