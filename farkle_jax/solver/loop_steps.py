"""Dependent loop steps of a program, read from its loop structure.

An accelerator runs a loop one iteration after the other, with a round trip
to the host for the control of every `while` iteration, so the number of
sequential loop iterations on a sweep's critical path bounds its speed far
more than its arithmetic does. `count(fn, *args)` traces `fn` to a jaxpr and
runs it with an interpreter that walks every loop: the steps of a loop are
the sum over its iterations of the steps of its body, at least one each
(loops one after the other add up). A loop whose body holds no loop and whose
trip count is written in its structure (a `scan`'s length, a `fori_loop`'s
bounds) is counted without running its body in Python; other loops run
iteration by iteration, so data-dependent trip counts (Newton steps that stop
at a tolerance) are counted as they happen. Loops inside a `shard_map` are
counted for one device's shard (meshes of one device only).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np
from jax.extend import core as jcore

_LOOPS = ("while", "scan")
# Reductions over a mesh axis: the identity on the one-device meshes counted.
_COLLECTIVES = ("pmax", "pmin", "psum")


def count(fn: Callable, *args: Any) -> int:
  """Sequential loop iterations of one call of `fn(*args)` (run for real)."""
  closed = jax.make_jaxpr(fn)(*args)
  steps, _ = _run(closed.jaxpr, closed.consts, jax.tree.leaves(args))
  return steps


def _sub_jaxprs(params: dict) -> list:
  found = []
  for value in params.values():
    for item in value if isinstance(value, (tuple, list)) else (value,):
      if isinstance(item, jcore.ClosedJaxpr):
        found.append(item.jaxpr)
      elif isinstance(item, jcore.Jaxpr):
        found.append(item)
  return found


def _has_loop(jaxpr) -> bool:
  return any(eqn.primitive.name in _LOOPS
             or any(_has_loop(j) for j in _sub_jaxprs(eqn.params))
             for eqn in jaxpr.eqns)


def _bind(eqn, invals):
  params = eqn.primitive.get_bind_params(eqn.params)
  with eqn.ctx.manager:
    out = eqn.primitive.bind(*invals, **params)
  return list(out) if eqn.primitive.multiple_results else [out]


def _run(jaxpr, consts, args) -> tuple[int, list]:
  env = {}

  def read(v):
    return v.val if isinstance(v, jcore.Literal) else env[v]

  for v, x in zip(jaxpr.constvars, consts):
    env[v] = x
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  steps = 0
  for eqn in jaxpr.eqns:
    invals = [read(v) for v in eqn.invars]
    name = eqn.primitive.name
    if name in _COLLECTIVES:
      outs = list(invals)  # over a one-device mesh axis (see _shard_map)
    elif name in _LOOPS or any(_has_loop(j) for j in _sub_jaxprs(eqn.params)):
      rule = _RULES.get(name)
      if rule is None:
        raise NotImplementedError(f"loop inside a {name!r} primitive")
      s, outs = rule(eqn, invals)
      steps += s
    else:
      outs = _bind(eqn, invals)
    for v, x in zip(eqn.outvars, outs):
      env[v] = x
  return steps, [read(v) for v in jaxpr.outvars]


def _fori_trips(eqn, invals) -> int | None:
  """Trip count of a `fori_loop` lowered to `while` (carry i, upper, ...,
  condition i < upper, i + 1 per iteration), else None."""
  cond, body = eqn.params["cond_jaxpr"].jaxpr, eqn.params["body_jaxpr"].jaxpr
  nc, nb = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
  if len(cond.eqns) != 1 or cond.eqns[0].primitive.name != "lt":
    return None
  if list(cond.eqns[0].invars) != list(cond.invars[nc:nc + 2]):
    return None
  if body.outvars[1] is not body.invars[nb + 1]:
    return None
  step = [e for e in body.eqns if e.outvars[0] is body.outvars[0]]
  if (len(step) != 1 or step[0].primitive.name != "add"
      or step[0].invars[0] is not body.invars[nb]
      or not isinstance(step[0].invars[1], jcore.Literal)
      or step[0].invars[1].val != 1):
    return None
  carry = invals[nc + nb:]
  return max(0, int(carry[1]) - int(carry[0]))


def _while(eqn, invals):
  p = eqn.params
  nc, nb = p["cond_nconsts"], p["body_nconsts"]
  body = p["body_jaxpr"]
  if not _has_loop(body.jaxpr):
    trips = _fori_trips(eqn, invals)
    if trips is not None:
      return trips, _bind(eqn, invals)
  cond = jax.jit(jcore.jaxpr_as_fun(p["cond_jaxpr"]))
  cond_consts, body_consts = invals[:nc], invals[nc:nc + nb]
  carry = invals[nc + nb:]
  steps = 0
  while bool(cond(*cond_consts, *carry)[0]):
    s, carry = _run(body.jaxpr, body.consts, [*body_consts, *carry])
    steps += max(1, s)
  return steps, carry


def _scan(eqn, invals):
  p = eqn.params
  length, body = p["length"], p["jaxpr"]
  if not _has_loop(body.jaxpr):
    return length, _bind(eqn, invals)
  nconst, ncarry = _scan_split(eqn)
  consts, carry = invals[:nconst], invals[nconst:nconst + ncarry]
  xs = invals[nconst + ncarry:]
  ys, steps = [], 0
  order = range(length - 1, -1, -1) if p["reverse"] else range(length)
  for i in order:
    s, out = _run(body.jaxpr, body.consts,
                  [*consts, *carry, *(x[i] for x in xs)])
    steps += max(1, s)
    carry, y = out[:ncarry], out[ncarry:]
    ys.append(y)
  if p["reverse"]:
    ys.reverse()
  stacked = [np.stack([np.asarray(y[j]) for y in ys])
             for j in range(len(eqn.outvars) - ncarry)]
  return steps, [*carry, *stacked]


def _scan_split(eqn) -> tuple[int, int]:
  """(consts, carry) counts of a scan.

  JAX up to 0.10 names them in the parameters; 0.11 does not. Otherwise
  they are read off the types, which hold in every version: operands are
  consts, carry, xs and results carry, ys, in that order; a const or a
  carry has its body variable's shape, while an x or a y has one more axis
  (the scan's length) in front.
  """
  p = eqn.params
  if "num_consts" in p and "num_carry" in p:
    return p["num_consts"], p["num_carry"]
  body = p["jaxpr"].jaxpr
  if (len(body.invars) != len(eqn.invars)
      or len(body.outvars) != len(eqn.outvars)):
    raise NotImplementedError(f"a scan with parameters {sorted(p)}")
  same = [o.aval.shape == b.aval.shape
          for o, b in zip(eqn.outvars, body.outvars)]
  ncarry = same.index(False) if False in same else len(same)
  stacked = [o.aval.shape != b.aval.shape
             for o, b in zip(eqn.invars, body.invars)]
  nxs = len(stacked) - (max(i for i, s in enumerate(stacked) if not s) + 1
                        if False in stacked else 0)
  return len(eqn.invars) - ncarry - nxs, ncarry


def _call(key):
  def rule(eqn, invals):
    sub = eqn.params[key]
    if isinstance(sub, jcore.ClosedJaxpr):
      return _run(sub.jaxpr, sub.consts, invals)
    return _run(sub, [], invals)
  return rule


def _shard_map(eqn, invals):
  if eqn.params["mesh"].size != 1:
    raise NotImplementedError("loop steps are counted on a one-device mesh")
  return _call("jaxpr")(eqn, invals)


def _cond(eqn, invals):
  branch = eqn.params["branches"][int(invals[0])]
  return _run(branch.jaxpr, branch.consts, invals[1:])


_RULES = {
    "while": _while, "scan": _scan, "pjit": _call("jaxpr"),
    "jit": _call("jaxpr"), "closed_call": _call("call_jaxpr"),
    "remat": _call("jaxpr"), "checkpoint": _call("jaxpr"),
    "custom_jvp_call": _call("call_jaxpr"),
    "custom_vjp_call": _call("call_jaxpr"), "shard_map": _shard_map,
    "cond": _cond,
}
