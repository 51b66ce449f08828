// The explorer's page over the JSON API of farkle_jax.apps.explorer, for any
// number of players (game.js, loaded first, holds the API call, the formats
// and the game against the computer).
"use strict";

let info = null;

function seatName(i) {
  if (info.players === 2) return i ? "opponent" : "your score";
  return `player ${i + 1}` + (i ? "" : " (to move)");
}

function seatFields() {
  const counts = info.farkle_counts > 1;
  // Under rules.hands the farkle fields say whose hand each player holds.
  const hands = (info.rules.hands || []).length > 0;
  return [...Array(info.players).keys()].map(i =>
      `<label>${seatName(i)} <input class="score" type="number" value="0" ` +
      `step="${info.step}"></label>` + (counts ? `<label>` +
      `${hands ? "hand" : "farkles"} <select class="count">` +
      [...Array(info.farkle_counts).keys()].map(k => `<option value="${k}"` +
          `${hands && k === i ? " selected" : ""}>${hands ? k + 1 : k}` +
          "</option>").join("") + "</select></label>" : "")
  ).join(" ");
}

// scores=..&counts=.. of a form's seats, then its other named fields.
function query(form) {
  const params = new URLSearchParams();
  const values = cls => [...form.querySelectorAll(cls)].map(e => e.value);
  params.set("scores", values(".score").join(","));
  if (info.farkle_counts > 1) params.set("counts", values(".count").join(","));
  for (const [k, v] of new FormData(form)) if (v !== "") params.set(k, v);
  // A roll says how many dice were rolled; "dice rolled" asks without one.
  if (params.get("roll")) params.delete("n");
  if (run !== "main") params.set("run", run);
  return params.toString();
}

function showTab(button) {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.classList.toggle("active", tab === button);
    document.getElementById(tab.dataset.panel).hidden = tab !== button;
  }
}

function players(win) {
  return win.map((w, i) => `${i ? seatName(i) : "mover"} ${pct(w)}`)
      .join(", ");
}

// Strategy table.
function cellColour(action, w) {
  const depth = 0.25 + 0.75 * w;
  return action === "bank" ? `rgba(224, 128, 58, ${depth})`
                           : `rgba(75, 123, 208, ${depth})`;
}

function tableCell(t, c, name) {
  const where = `data-t="${t}" data-n="${c.n}"`;
  if (c.reachable === false)
    return `<td class="cell unreachable" ${where} title="t=${t}, n=${name}: ` +
           "cannot happen\">-</td>";
  const w = c.win[0];
  return `<td class="cell ${c.action}" ${where} data-w="${w}" ` +
         `style="background:${cellColour(c.action, w)}" title="t=${t}, ` +
         `n=${name}: ${c.action}, win probability ${w.toFixed(6)} ` +
         `(${players(c.win)})">${c.action === "bank" ? "B" : "R"}</td>`;
}

async function showTable(event) {
  if (event) event.preventDefault();
  const error = document.getElementById("table-error");
  const grid = document.getElementById("table-grid");
  error.textContent = "";
  try {
    const table = await api("/api/table?" + query(
        document.getElementById("table-form")));
    // Dice that differ name their states by letter (table.dice).
    const names = table.dice ? table.dice.columns : [6, 5, 4, 3, 2, 1];
    const caption = table.dice ?
        `<caption>dice left, by letter: ${table.dice.legend}</caption>` : "";
    const head = "<tr><th>t</th>" + names.map(
        n => `<th>n=${n}</th>`).join("") + "</tr>";
    grid.innerHTML = caption + head + table.rows.map(row =>
        `<tr><td class="t">${row.t}</td>` +
        row.cells.map((c, i) => tableCell(row.t, c, names[i])).join("") +
        "</tr>").join("");
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

// The chance that the turn ends in a farkle when rolling on (two players'
// answers give it; "" where it is not given).
function bustText(d) {
  return typeof d.bust === "number" ? `, bust ${pct(d.bust)}` : "";
}

function decisionText(d, where) {
  if (d.roll === null) return `${where}: bank, and win the game.`;
  if (d.bank === null)
    return `${where}: roll (win probability ${pct(d.roll[0])}` +
           `${bustText(d)}); banking is not allowed yet (below the ` +
           `${info.entry_minimum ? "entry or " : ""}bank minimum).`;
  return `${where}: ${d.best.toUpperCase()} (bank ${pct(d.bank[0])}, roll ` +
         `${pct(d.roll[0])}${bustText(d)}; every player after the better: ` +
         `${players(d.best === "bank" ? d.bank : d.roll)}).`;
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
      out.innerHTML = `<p id="decision">${decisionText(a, "Here")}</p>`;
      return;
    }
    if (a.choices.length === 0) {
      out.innerHTML = "<p id=\"decision\">Farkle: nothing scores; the turn " +
                      "ends with nothing banked.</p>";
      return;
    }
    const seats = [...Array(info.players).keys()];
    const bust = a.choices.some(c => typeof c.bust === "number");
    const rows = a.choices.map((c, i) =>
        `<tr class="choice${i === 0 ? " best" : ""}"><td class="die">` +
        `${dice(c.kept)}</td><td>${c.kept.join(" ")}</td><td>${c.points}</td>` +
        `<td>${c.t}</td><td>${c.left || c.n}</td>` + (c.wins_now ?
        `<td>wins</td>` +
        "<td></td>".repeat(info.players - 1) : c.win.map(
            w => `<td>${w.toFixed(6)}</td>`).join("")) +
        (bust ? `<td>${pct(c.bust)}</td>` : "") +
        `<td>${i === 0 ? "best" : ""}</td></tr>`).join("");
    out.innerHTML = `<table><tr><th></th><th>keep</th><th>points</th>` +
        `<th>turn total</th><th>dice left</th>` + seats.map(i =>
        `<th>win: ${i ? seatName(i) : "mover"}</th>`).join("") +
        (bust ? `<th title="chance that the turn ends in a farkle, ` +
         `playing on as advised">bust</th>` : "") +
        `<th></th></tr>${rows}</table>` + (a.then ? `<p id="decision">` +
        decisionText(a.then, `Then, at ${a.then.t} with ${a.then.n} dice`) +
        "</p>" : "<p id=\"decision\">The best choice wins the game.</p>");
  } catch (e) {
    error.textContent = e.message;
  }
}

async function start() {
  info = await api("/api/info" + runQuery("?"));
  const r = info.rules;
  const odds = info.players === 2 ? `the first player wins ` +
      `${pct(info.seat_win[0])} of games with optimal play.` :
      info.seat_win.map((w, i) => `seat ${i + 1} wins ${pct(w)}`).join(", ");
  document.getElementById("rules").textContent =
      `${info.players} players, ${r.name} rules to ${info.goal} (values: ` +
      `${info.source}); ${odds}`;
  for (const span of document.querySelectorAll(".seat-fields"))
    span.innerHTML = seatFields();
  for (const tab of document.querySelectorAll(".tab"))
    tab.onclick = () => showTab(tab);
  document.getElementById("table-form").onsubmit = showTable;
  document.getElementById("table-grid").onmouseover = hoverCell;
  document.getElementById("advice-form").onsubmit = advise;
  for (const b of document.querySelectorAll(".die-add")) b.onclick = addDie;
  document.getElementById("dice-clear").onclick = () => {
    document.getElementById("advice-roll").value = "";
  };
  initDice();
  await showTable();
}

start();
