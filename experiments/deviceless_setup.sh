#!/usr/bin/env bash
# A Python that can compile the solver for a GPU without one: a virtual
# environment beside this machine's Python (its packages stay visible) with
# JAX's CUDA plugin at JAX's own version (about 2.5 GB of downloads, once).
# Prints the environment's python; `experiments/benchmark.py --target=h100`
# runs under it with JAX_PLATFORMS=cpu:
#
#   PY=$(bash experiments/deviceless_setup.sh)
#   JAX_PLATFORMS=cpu $PY experiments/benchmark.py --config configs/facebook.py \
#       --counts_only --methods=wavefront --target=h100
#
# FARKLE_JAX_CUDA_VENV sets where the environment lives
# (default ~/.cache/farkle_jax/cuda-venv).
set -euo pipefail
PYTHON=${PYTHON:-python}
VENV=${FARKLE_JAX_CUDA_VENV:-$HOME/.cache/farkle_jax/cuda-venv}
JAX_VERSION=$($PYTHON -c "import jax; print(jax.__version__)")
if [ ! -x "$VENV/bin/python" ]; then
  $PYTHON -m venv --system-site-packages "$VENV" >&2
fi
if ! "$VENV/bin/python" -c "import jax_plugins.xla_cuda13, jax
assert jax.__version__ == '$JAX_VERSION'" >/dev/null 2>&1; then
  echo "installing JAX's CUDA plugin $JAX_VERSION into $VENV (about 2.5 GB)" >&2
  "$VENV/bin/python" -m pip install -q "jax[cuda13]==$JAX_VERSION" >&2
fi
echo "$VENV/bin/python"
