"""The Facebook Farkle model of the published figures: floor -2500.

  farkle solve --config facebook --workdir runs/facebook

Minutes and 0.7 GB on a 2-core CPU (13 sweeps; the README's "How long
things take", BENCHMARKS.md). The ordered method's Newton step
(`--config.solver.newton=True`) solves it in 8 sweeps, each several times
dearer on a CPU.
"""

from farkle_jax.solver import configuration


def get_config():
  config = configuration.base("facebook")
  config.rules.floor = -2500
  config.solver.tol = 1e-9
  config.solver.norm = "relative"
  return config
