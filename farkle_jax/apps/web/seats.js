// The N-player explorer: every player's score, then advice or a turn table
// (game.js, loaded first, holds the API call, the formats and the game).
"use strict";

const $ = (sel) => document.querySelector(sel);
let info = null;

function scores() {
  return [...document.querySelectorAll(".score")].map((e) => e.value).join(",");
}

function vector(v) {
  return v.map((x, i) => `player ${i + 1}: ${pct(x)}`).join(", ");
}

async function position() {
  const s = await api(`/api/seats?scores=${scores()}`);
  $("#seats-win").textContent = "win probabilities (player to move first) — " +
    vector(s.win) + "; bank from turn total (n = 6..1): " +
    s.bank_from.map((b) => (b === null ? "never" : b)).join(", ");
}

async function advise() {
  $("#seats-error").textContent = "";
  const f = $("#seats-form");
  const q = `scores=${scores()}&t=${f.t.value}&n=${f.n.value}`;
  try {
    await position();
    const roll = f.roll.value.trim();
    const a = await api(`/api/advice?${q}` + (roll ? `&roll=${roll}` : ""));
    if (!roll) {
      $("#seats-result").innerHTML = `<p id="decision">${a.best}: bank ` +
        (a.bank ? vector(a.bank) : "not allowed") + `; roll ${vector(a.roll)}</p>`;
      return;
    }
    if (!a.choices.length) {
      $("#seats-result").innerHTML = "<p id='decision'>farkle: nothing scores</p>";
      return;
    }
    const head = "<tr><th>keep</th><th>points</th><th>turn total</th>" +
      "<th>dice left</th>" + info.rules_players.map((i) =>
        `<th>player ${i}</th>`).join("") + "</tr>";
    const rows = a.choices.map((c, i) => `<tr class="choice${i ? "" : " best"}">` +
      `<td>${c.kept.join(" ")}</td><td>${c.points}</td><td>${c.t}</td>` +
      `<td>${c.n}</td>` + c.win.map((x) => `<td>${pct(x)}</td>`).join("") +
      "</tr>").join("");
    $("#seats-result").innerHTML = `<table>${head}${rows}</table>`;
  } catch (e) {
    $("#seats-error").textContent = e.message;
  }
}

async function table() {
  $("#seats-error").textContent = "";
  try {
    await position();
    const tb = await api(`/api/table?scores=${scores()}&t_max=2000`);
    const head = "<tr><th>t</th>" + [6, 5, 4, 3, 2, 1].map((n) =>
      `<th>n=${n}</th>`).join("") + "</tr>";
    const rows = tb.rows.map((r) => `<tr><td>${r.t}</td>` + r.cells.map((c) =>
      `<td class="cell ${c.action}" title="${vector(c.win)}">` +
      `${c.action[0].toUpperCase()} ${pct(c.win[0])}</td>`).join("") +
      "</tr>").join("");
    $("#seats-result").innerHTML = `<table id="seats-table">${head}${rows}</table>`;
  } catch (e) {
    $("#seats-error").textContent = e.message;
  }
}

async function start() {
  info = await api("/api/info");
  info.rules_players = [...Array(info.players).keys()].map((i) => i + 1);
  $("#rules").textContent = `${info.players} players, ${info.rules.name} ` +
    `rules to ${info.goal}: ` + info.seat_win.map((w, i) =>
      `seat ${i + 1} wins ${pct(w)}`).join(", ");
  $("#score-fields").innerHTML = info.rules_players.map((i) =>
    `<label>player ${i}${i === 1 ? " (to move)" : ""} <input class="score" ` +
    `type="number" value="0" step="${info.step}"></label>`).join(" ");
  $("#seats-go").onclick = advise;
  $("#table-go").onclick = table;
  await position();
}

start();
