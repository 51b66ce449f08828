// The farkle_jax explorer: a page over the JSON API of farkle_jax.apps.web_app.
"use strict";

const FACES = ["", "\u2680", "\u2681", "\u2682", "\u2683", "\u2684", "\u2685"];
let info = null;
let game = null;

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
function dice(faces) { return faces.map(f => FACES[f]).join(" "); }
function query(form) {
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v !== "") params.set(k, v);
  return params.toString();
}

function showTab(button) {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.classList.toggle("active", tab === button);
    document.getElementById(tab.dataset.panel).hidden = tab !== button;
  }
}

// Strategy table.
function cellColour(action, w) {
  const depth = 0.25 + 0.75 * w;
  return action === "bank" ? `rgba(224, 128, 58, ${depth})`
                           : `rgba(75, 123, 208, ${depth})`;
}

async function showTable(event) {
  if (event) event.preventDefault();
  const error = document.getElementById("table-error");
  const grid = document.getElementById("table-grid");
  error.textContent = "";
  try {
    const table = await api("/api/table?" + query(
        document.getElementById("table-form")));
    const head = "<tr><th>t</th>" + [6, 5, 4, 3, 2, 1].map(
        n => `<th>n=${n}</th>`).join("") + "</tr>";
    const rows = table.rows.map(row => {
      const cells = [6, 5, 4, 3, 2, 1].map(n => {
        const w = row.W[n], action = row.action[n];
        if (row.unreachable.includes(n))
          return `<td class="cell unreachable" data-t="${row.t}" data-n="${n}" ` +
                 `title="t=${row.t}, n=${n}: cannot happen">-</td>`;
        const label = action === "bank" ? "B" : "R";
        return `<td class="cell ${action}" data-t="${row.t}" data-n="${n}" ` +
               `data-w="${w}" style="background:${cellColour(action, w)}" ` +
               `title="t=${row.t}, n=${n}: ${action}, win probability ` +
               `${w.toFixed(6)}">${label}</td>`;
      }).join("");
      return `<tr><td class="t">${row.t}</td>${cells}</tr>`;
    }).join("");
    grid.innerHTML = head + rows;
  } catch (e) {
    error.textContent = e.message;
  }
}

function hoverCell(event) {
  const cell = event.target.closest("td.cell");
  if (!cell) return;
  document.getElementById("hover").textContent = cell.title;
}

// Advice.
function addDie(event) {
  const input = document.getElementById("advice-roll");
  const faces = input.value.split(/[ ,]+/).filter(x => x);
  faces.push(event.target.dataset.face);
  input.value = faces.join(",");
  document.querySelector("#advice-form [name=n]").value = faces.length;
}

function decisionText(d, where) {
  if (d.roll === null) return `${where}: bank, and win the game.`;
  if (d.bank === null)
    return `${where}: roll (win probability ${pct(d.roll)}); banking is not ` +
           `allowed yet (below the ${info.entry_minimum ? "entry or " : ""}` +
           `bank minimum).`;
  return `${where}: ${d.best.toUpperCase()} (bank ${pct(d.bank)}, roll ` +
         `${pct(d.roll)}).`;
}

async function advise(event) {
  if (event) event.preventDefault();
  const error = document.getElementById("advice-error");
  const out = document.getElementById("advice-result");
  error.textContent = "";
  out.innerHTML = "";
  try {
    const a = await api("/api/advice?" + query(
        document.getElementById("advice-form")));
    if (!a.choices) {
      out.innerHTML = `<p id="decision">${decisionText(a.decision, "Here")}</p>`;
      return;
    }
    if (a.choices.length === 0) {
      out.innerHTML = `<p id="decision">Farkle: nothing scores. Win ` +
                      `probability after it: ${pct(a.farkle)}.</p>`;
      return;
    }
    const rows = a.choices.map((c, i) =>
        `<tr class="choice${i === 0 ? " best" : ""}"><td class="die">` +
        `${dice(c.kept)}</td><td>${c.kept.join(" ")}</td><td>${c.points}</td>` +
        `<td>${c.t}</td><td>${c.n}</td><td>${c.wins_now ? "wins" :
        c.win.toFixed(6)}</td><td>${i === 0 ? "best" : ""}</td></tr>`).join("");
    const best = a.choices[0];
    out.innerHTML = `<table><tr><th></th><th>keep</th><th>points</th>` +
        `<th>turn total</th><th>dice left</th><th>win probability</th><th>` +
        `</th></tr>${rows}</table><p id="decision">` +
        decisionText(a.decision, `Then, at ${best.t} with ${best.n} dice`) +
        "</p>";
  } catch (e) {
    error.textContent = e.message;
  }
}

// Playing the computer.
async function newGame(event) {
  event.preventDefault();
  const form = new FormData(document.getElementById("play-form"));
  const seed = form.get("seed");
  await play(() => api("/api/games", {
      opponent: form.get("opponent"), first: form.get("first"),
      seed: seed === "" ? null : Number(seed)}));
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
  document.getElementById("scoreboard").textContent =
      `You ${game.you} \u2014 computer (${game.opponent}) ${game.computer}, ` +
      `goal ${game.goal}. Turn ${game.turn}` +
      (game.phase === "over" ? "." : `: turn total ${game.t}, ${game.n} dice.`) +
      (game.bar && game.phase !== "over" ? ` Last turn: beat ${game.bar}.` : "");
  document.getElementById("dice").textContent = dice(game.dice);
  const options = document.getElementById("options");
  options.innerHTML = "";
  for (const o of game.options) {
    const b = document.createElement("button");
    b.className = "option";
    b.textContent = `keep ${o.dice.join(" ")} \u2192 ${o.points} points ` +
                    `(total ${o.t}, ${o.n} dice)`;
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
    over.innerHTML = `<h2>Game over: ${game.winner} won.</h2><p>You made ` +
        `${game.decisions} decisions and gave away ${pct(game.given_away)} ` +
        `win probability in all.</p>` + (worst ? `<p>Your costliest ` +
        `decisions:</p><ol>${worst}</ol>` : "<p>Every decision was a best one.</p>");
  }
}

async function start() {
  info = await api("/api/info");
  const r = info.rules;
  document.getElementById("rules").textContent =
      `${r.name} rules to ${info.goal} (values: ${info.source}); the first ` +
      `player wins ${pct(info.first_player_win)} of games with optimal play.`;
  for (const select of document.querySelectorAll("select[name=f], select[name=e]"))
    select.innerHTML = [...Array(info.farkle_counts).keys()].map(
        k => `<option>${k}</option>`).join("");
  for (const tab of document.querySelectorAll(".tab"))
    tab.onclick = () => showTab(tab);
  document.getElementById("table-form").onsubmit = showTable;
  document.getElementById("table-grid").onmouseover = hoverCell;
  document.getElementById("advice-form").onsubmit = advise;
  for (const b of document.querySelectorAll(".die-add")) b.onclick = addDie;
  document.getElementById("dice-clear").onclick = () => {
    document.getElementById("advice-roll").value = "";
  };
  document.getElementById("play-form").onsubmit = newGame;
  document.getElementById("roll").onclick = () => move({action: "roll"});
  document.getElementById("bank").onclick = () => move({action: "bank"});
  await showTable();
}

start();
