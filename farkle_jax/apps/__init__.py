"""The programs a person runs, and what only they share.

    farkle solve / advise / table / analyze / play / serve   (`commands`)
    python -m farkle_jax.main --config configs/<name>.py      (the solve)
    python -m farkle_jax.apps.advise / table / analyze / play / serve

`commands` is the `farkle` command, `command_help` each command's help;
`command_line` gives every program one-line errors and exit codes,
`progress` the bars and ETAs, `explorer` / `web_games` / `web_guard` the
browser explorer that `serve` starts (one page for any number of players),
`cluster` the multi-process solve.
Library code lives below: game -> solver -> strategy.
"""
