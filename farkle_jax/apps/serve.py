"""The web explorer: turn tables, advice for a roll, and a game against the
computer, in a browser.

    farkle serve                          # http://127.0.0.1:8000
    farkle serve --workdir runs/default --port 8080
    farkle serve --host 0.0.0.0           # reachable from other machines
    farkle serve --workdir runs/three_players     # a run of 3+ players
    farkle serve --workdir runs/kcd --solve_dir runs/web  # the Dice tab

It binds to localhost unless --host says otherwise. The JSON API behind the
page (one page for any number of players) is described in `explorer` and in
the README.
"""

import os
import socket

import jax
from absl import app, flags, logging

import farkle_jax  # (also enables float64)
from farkle_jax.apps import command_line, explorer, web_guard
from farkle_jax.solver import configuration
from farkle_jax.strategy import solved_game

_WORKDIR = flags.DEFINE_string("workdir", None, "Workdir of a finished run "
                               "(default: the shipped values, --shipped).")
_SHIPPED = flags.DEFINE_enum("shipped", "facebook", solved_game.SHIPPED,
                             "Shipped solved values to use without --workdir.")
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Address to bind (default: "
                            "this machine only).")
_PORT = flags.DEFINE_integer("port", 8000, "Port to listen on.")
_SOLVE_DIR = flags.DEFINE_string(
    "solve_dir", None, "Where runs of each player's dice chosen in the page "
    "go (the page's Dice tab solves the served rules with them and serves "
    "each beside the main run; none: it does not solve), and the compiled "
    "programs of those solves.")
_ALLOW = flags.DEFINE_bool("allow_unconverged", False, "Serve a run that "
                           "stopped at max_iterations above its tolerance.")


def main(argv):
  import uvicorn   # only the server needs it
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if not 0 <= _PORT.value <= 65535:
    raise configuration.ConfigError(
        f"--port={_PORT.value}: a port is 0..65535")
  if _SOLVE_DIR.value and not jax.config.jax_compilation_cache_dir:
    # A solve of dice shaped like an earlier one's (other chances, goal)
    # then reads its compiled sweep instead of compiling it again.
    jax.config.update("jax_compilation_cache_dir",
                      os.path.join(_SOLVE_DIR.value, "xla_cache"))
  game = farkle_jax.load(_WORKDIR.value, _SHIPPED.value, _ALLOW.value)
  game.advice((0,) * game.players)   # compiles the turn pass before serving
  app_ = explorer.create_app(game, web_guard.allowed_hosts(_HOST.value),
                             _SOLVE_DIR.value)
  label = game.label if game.players == 2 else f"{game.players} players"
  if _HOST.value not in ("127.0.0.1", "localhost", "::1"):
    logging.warning("serving on %s: other machines can reach it", _HOST.value)
  try:  # bound here, so a port in use is one line before any banner
    sock = socket.create_server((_HOST.value, _PORT.value))
  except OSError as e:
    raise OSError(e.errno, f"cannot listen on {_HOST.value}:{_PORT.value}: "
                  f"{os.strerror(e.errno)}") from None
  port = sock.getsockname()[1]
  print(f"farkle_jax explorer ({game.rules.name} to {game.rules.goal}, "
        f"{label}) on http://{_HOST.value}:{port}/", flush=True)
  server = uvicorn.Server(uvicorn.Config(app_, log_level="warning"))
  server.run(sockets=[sock])


def cli() -> None:
  """The command (`farkle serve`)."""
  command_line.run(main)


if __name__ == "__main__":
  cli()
