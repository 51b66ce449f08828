"""Checksums and invariants: every change is seen, every bad value named."""

import numpy as np
import pytest

from farkle_jax.solver import integrity


def test_seal_detects_any_change():
  sealed = integrity.seal({"a": 1, "b": [0.1, 0.2]})
  assert integrity.unseal(sealed, "x") == {"a": 1, "b": [0.1, 0.2]}
  sealed["b"][1] = 0.2000001
  with pytest.raises(integrity.Damaged, match="x does not match"):
    integrity.unseal(sealed, "x")
  with pytest.raises(integrity.Damaged, match="no checksum"):
    integrity.unseal({"a": 1}, "x")


def test_array_checksum_sees_bytes_dtype_and_shape():
  x = np.linspace(0, 1, 12)
  base = integrity.array_checksum(x)
  y = x.copy()
  y.view(np.uint8)[40] ^= 1  # one bit
  assert integrity.array_checksum(y) != base
  assert integrity.array_checksum(x.reshape(3, 4)) != base
  assert integrity.array_checksum(x.astype(np.float32)) != base
  integrity.verify_arrays({"x": x}, {"x": base}, "here")
  with pytest.raises(integrity.Damaged, match="here: x does not match"):
    integrity.verify_arrays({"x": y}, {"x": base}, "here")


@pytest.mark.parametrize("bad, match", [
    (np.nan, "1 non-finite"), (np.inf, "1 non-finite"),
    (1.0 + 1e-9, r"outside \[0, 1\]"), (-1e-9, r"outside \[0, 1\]")])
def test_probability_invariants(bad, match):
  w = np.full((3, 3), 0.5)
  w[0, 0], w[2, 2] = 0.0, 1.0 + 1e-14  # rounding at the ends is allowed
  integrity.check_probabilities(w, "w")
  w[1, 2] = bad
  with pytest.raises(integrity.Damaged, match=match):
    integrity.check_probabilities(w, "w")
