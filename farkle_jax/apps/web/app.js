// The two-player explorer: a page over the JSON API of farkle_jax.apps.web_app
// (game.js, loaded first, holds the API call, the formats and the game).
"use strict";

let info = null;

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
  await showTable();
}

start();
