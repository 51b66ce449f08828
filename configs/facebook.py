"""The Facebook Farkle model of the published figures: floor -2500.

  python -m farkle_jax.main --config configs/facebook.py --workdir runs/facebook

The ordered method runs here without its Newton step (solver.newton): on a
2-core CPU the step cuts the sweeps from 19 to 8 but each sweep then costs
about 3x (16.2 min against 12.0, 1.04 GB against 0.58; BENCHMARKS.md). To
solve in few sweeps instead:

  python -m farkle_jax.main --config configs/facebook.py --workdir runs/fb_newton \
      --config.solver.newton=True
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("facebook")
  config.rules.floor = -2500
  config.solver.tol = 1e-9
  config.solver.norm = "relative"
  config.solver.newton = False
  return config
