"""JAX's persistent compilation cache, on by default.

A solve compiles its chunk of sweeps once per shape: seconds on a CPU, more
for a GPU. With the cache, a resumed run, a rerun, or a second config of
the same shapes reads the compiled program from disk instead.

`config.compile_cache` says where: "" (the default) keeps a directory the
user gave JAX itself (JAX_COMPILATION_CACHE_DIR) or else uses
`$XDG_CACHE_HOME/farkle_jax/xla` (~/.cache/farkle_jax/xla); "off" turns it
off; anything else is the directory. A directory that cannot be written
turns the cache off with one warning line: the solve runs without it.
"""

from __future__ import annotations

import os

import jax
from absl import logging

OFF = "off"
ENV = "JAX_COMPILATION_CACHE_DIR"
# Programs that compile faster than this are not worth a file.
MIN_COMPILE_S = 0.2


def default_dir() -> str:
  """The cache's home when nothing says otherwise."""
  home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(home, "farkle_jax", "xla")


def resolve(setting: str) -> str | None:
  """The directory `setting` stands for (None: off)."""
  if setting == OFF:
    return None
  if setting:
    return os.path.abspath(os.path.expanduser(setting))
  return os.environ.get(ENV) or jax.config.jax_compilation_cache_dir or (
      default_dir())


def _writable(folder: str) -> str | None:
  """Why `folder` cannot hold the cache, or None."""
  try:
    os.makedirs(folder, exist_ok=True)
  except OSError as e:
    return e.strerror or str(e)
  if not os.access(folder, os.W_OK | os.X_OK):
    return "not writable"
  return None


def use(setting: str) -> str | None:
  """Points JAX's persistent cache at what `setting` says (before the
  first compile it concerns); returns the directory, None when off."""
  folder = resolve(setting)
  if folder is not None:
    why = _writable(folder)
    if why:
      logging.warning("compile cache off: %s: %s (config.compile_cache "
                      "sets another directory, or 'off')", folder, why)
      folder = None
  _point(folder)
  return folder


def active() -> bool:
  """Whether compiled programs go to (and come from) a cache directory."""
  return bool(jax.config.jax_enable_compilation_cache
              and jax.config.jax_compilation_cache_dir)


def _point(folder: str | None) -> None:
  if folder == jax.config.jax_compilation_cache_dir and (
      jax.config.jax_enable_compilation_cache == (folder is not None)):
    return
  from jax._src import compilation_cache   # forgets the folder it opened
  jax.config.update("jax_enable_compilation_cache", folder is not None)
  jax.config.update("jax_compilation_cache_dir", folder)
  if folder is not None:
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      min(MIN_COMPILE_S, jax.config
                          .jax_persistent_cache_min_compile_time_secs))
  compilation_cache.reset_cache()
