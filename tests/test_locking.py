"""The workdir lock: one holder, named in the refusal, free on release."""

import os

import pytest

from farkle_jax.solver import locking


def test_second_holder_is_refused_naming_the_first(tmp_path):
  with locking.WorkdirLock(str(tmp_path)) as held:
    assert held.__enter__() is held  # entering again is a no-op
    with pytest.raises(locking.WorkdirLocked,
                       match=rf"in use by another solve \(pid {os.getpid()} "):
      locking.WorkdirLock(str(tmp_path)).__enter__()
  with locking.WorkdirLock(str(tmp_path)):  # released: free again
    pass
