"""The programs a person runs, and what only they share.

    python -m farkle_jax.main      --config configs/<name>.py   (the solve)
    python -m farkle_jax.apps.advise / table / analyze / play / serve

`command_line` gives every program one-line errors and exit codes,
`progress` the bars and ETAs, `web_app` / `seats_web` / `web_guard` the
browser explorer that `serve` starts, `cluster` the multi-process solve.
Library code lives below: game -> solver -> strategy.
"""
