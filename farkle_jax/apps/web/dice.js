// Loaded after game.js: each player's dice chosen in the page, solved by
// the server (farkle_jax.apps.dice_solves) and then served by the page.
"use strict";

function initDice() {
  const form = document.getElementById("dice-form");
  const status = document.getElementById("dice-status");
  form.querySelector("[name=goal]").value = info.goal;
  document.getElementById("dice-catalog").textContent =
      "Dice of the catalog: " + info.catalog.join(", ") +
      ". Up to six per player, comma-separated, each a name or six " +
      "chances of faces 1..6 such as 0.3/0.1/0.1/0.1/0.3/0.1; the rest " +
      "are fair.";
  if (!info.solves) {
    status.textContent = "This server does not solve (start it with " +
        "serve --solve_dir DIR).";
    document.getElementById("dice-go").disabled = true;
  }
  form.onsubmit = solveDice;
  document.getElementById("dice-main").onclick = async () => {
    await showRun("main");
    status.textContent = "This page shows the server's own dice again.";
  };
}

async function solveDice(event) {
  event.preventDefault();
  const form = new FormData(document.getElementById("dice-form"));
  const error = document.getElementById("dice-error");
  error.textContent = "";
  try {
    const s = await api("/api/solve", {
        hands: [form.get("hand1"), form.get("hand2")],
        goal: Number(form.get("goal"))});
    await watchSolve(s.run);
  } catch (e) {
    error.textContent = e.message;
  }
}

function progress(s) {
  const sweeps = s.sweeps ? `, sweep ${s.sweeps}, ETA ${s.eta}` : "";
  return `solving ${s.states.toLocaleString()} states: ${s.phase}, ` +
         `${s.elapsed.toFixed(1)} s${sweeps}`;
}

// Follows the solve of run `id`; when done, this page (and only this one)
// shows that run.
async function watchSolve(id) {
  const status = document.getElementById("dice-status");
  for (;;) {
    const s = await api(`/api/solve?run=${id}`);
    if (s.state === "running") {
      status.textContent = progress(s);
      await new Promise(done => setTimeout(done, 500));
      continue;
    }
    if (s.state === "failed") throw new Error(s.error);
    await showRun(s.run);
    status.textContent = `solved: the first player wins ` +
        `${pct(s.first_player_win)}; this page now shows these dice ` +
        `(run ${s.run}).`;
    return;
  }
}

async function showRun(id) {
  run = id;
  await start();
  await startGames();
  document.getElementById("dice-main").hidden = run === "main";
}
