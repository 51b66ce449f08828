"""farkle_jax: exact solver of two-player Farkle in JAX.

The solve is float64 by default, so importing the package enables JAX's 64-bit
mode (it must be on before any array exists).
"""

import jax

jax.config.update("jax_enable_x64", True)
