"""Dependent loop steps of a program, read from its loop structure.

An accelerator runs a loop one iteration after the other, with a round trip
to the host for the control of every `while` iteration, so the number of
sequential loop iterations on a sweep's critical path bounds its speed far
more than its arithmetic does. `count(fn, *args)` traces `fn` to a jaxpr and
re-traces it into a program that computes, beside `fn`'s own values, the
steps of every loop: the steps of a loop are the sum over its iterations of
the steps of its body, at least one each (loops one after the other add
up). A loop whose body holds no loop and whose trip count is written in its
structure (a `scan`'s length, a `fori_loop`'s bounds) counts that many
steps; other loops carry a counter through their iterations, so
data-dependent trip counts (Newton steps that stop at a tolerance) are
counted as they happen. That program is compiled once and run once (an
interpreter that walked the loops from Python compiled every primitive it
met: 3 s a method against 1 s). Loops inside a `shard_map` are counted for
one device's shard (meshes of one device only). A Pallas kernel
(`pallas_call`, the wavefront's fused chunk row on a GPU) is one launch,
counted as a plain operation: its own loops run inside the launch, on the
device, with no loop control between their iterations.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.extend import core as jcore
from jax.sharding import PartitionSpec as P

_LOOPS = ("while", "scan")
# Reductions over a mesh axis: the identity on the one-device meshes counted.
_COLLECTIVES = ("pmax", "pmin", "psum")
# Kernels whose loops run within one launch: plain operations here.
_KERNELS = ("pallas_call",)
_STEP = jnp.int64   # the solver enables float64 (and int64)


def count(fn: Callable, *args: Any) -> int:
  """Sequential loop iterations of one call of `fn(*args)` (run for real)."""
  closed = jax.make_jaxpr(fn)(*args)
  program = jax.jit(lambda consts, xs: _eval(closed.jaxpr, consts, xs)[0])
  return int(program(list(closed.consts), jax.tree.leaves(args)))


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
  return any(_holds_loop(eqn) for eqn in jaxpr.eqns)


def _holds_loop(eqn) -> bool:
  """A loop, or a primitive holding one (a kernel's own loops aside)."""
  name = eqn.primitive.name
  return name in _LOOPS or (name not in _KERNELS and any(
      _has_loop(j) for j in _sub_jaxprs(eqn.params)))


def _bind(eqn, invals):
  params = eqn.primitive.get_bind_params(eqn.params)
  with eqn.ctx.manager:
    out = eqn.primitive.bind(*invals, **params)
  return list(out) if eqn.primitive.multiple_results else [out]


def _eval(jaxpr, consts, args) -> tuple[jax.Array, list]:
  """(steps, outputs) of `jaxpr`, traced: the count is computed by the
  program itself, beside the values it computes."""
  env = {}

  def read(v):
    return v.val if isinstance(v, jcore.Literal) else env[v]

  for v, x in zip(jaxpr.constvars, consts):
    env[v] = x
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  steps = jnp.zeros((), _STEP)
  for eqn in jaxpr.eqns:
    invals = [read(v) for v in eqn.invars]
    name = eqn.primitive.name
    if name in _COLLECTIVES:
      outs = list(invals)  # over a one-device mesh axis (see _shard_map)
    elif _holds_loop(eqn):
      rule = _RULES.get(name)
      if rule is None:
        raise NotImplementedError(f"loop inside a {name!r} primitive")
      s, outs = rule(eqn, invals)
      steps = steps + s
    else:
      outs = _bind(eqn, invals)
    for v, x in zip(eqn.outvars, outs):
      env[v] = x
  return steps, [read(v) for v in jaxpr.outvars]


def _fori_trips(eqn, invals) -> jax.Array | None:
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
  trips = jnp.asarray(carry[1], _STEP) - jnp.asarray(carry[0], _STEP)
  # A loop batched by vmap (bounds of several lanes) runs its longest.
  return jnp.maximum(trips, 0).max()


def _while(eqn, invals):
  p = eqn.params
  nc, nb = p["cond_nconsts"], p["body_nconsts"]
  cond, body = p["cond_jaxpr"], p["body_jaxpr"]
  if not _has_loop(body.jaxpr):
    trips = _fori_trips(eqn, invals)
    if trips is not None:
      return trips, _bind(eqn, invals)
  cond_consts, body_consts = invals[:nc], invals[nc:nc + nb]

  def go_on(carry):
    return jcore.jaxpr_as_fun(cond)(*cond_consts, *carry[1:])[0]

  def iterate(carry):
    s, out = _eval(body.jaxpr, body.consts, [*body_consts, *carry[1:]])
    return [carry[0] + jnp.maximum(s, 1), *out]

  out = jax.lax.while_loop(go_on, iterate,
                           [jnp.zeros((), _STEP), *invals[nc + nb:]])
  return out[0], out[1:]


def _scan(eqn, invals):
  p = eqn.params
  length, body = p["length"], p["jaxpr"]
  if not _has_loop(body.jaxpr):
    return length, _bind(eqn, invals)
  nconst, ncarry = _scan_split(eqn)
  consts, carry = invals[:nconst], invals[nconst:nconst + ncarry]

  def iterate(carry, xs):
    s, out = _eval(body.jaxpr, body.consts, [*consts, *carry[1:], *xs])
    return [carry[0] + jnp.maximum(s, 1), *out[:ncarry]], out[ncarry:]

  last, ys = jax.lax.scan(iterate, [jnp.zeros((), _STEP), *carry],
                          invals[nconst + ncarry:], length=length,
                          reverse=p["reverse"])
  return last[0], [*last[1:], *ys]


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
      return _eval(sub.jaxpr, sub.consts, invals)
    return _eval(sub, [], invals)
  return rule


def _shard_map(eqn, invals):
  """The body runs inside a shard_map of the same mesh (its values carry
  that mesh's manual axes), the count leaving it as one more, replicated,
  result."""
  p = eqn.params
  if p["mesh"].size != 1:
    raise NotImplementedError("loop steps are counted on a one-device mesh")

  def body(*xs):
    s, outs = _eval(p["jaxpr"], [], list(xs))
    return (s, *outs)

  out = jax.shard_map(body, mesh=p["mesh"], in_specs=tuple(p["in_specs"]),
                      out_specs=(P(), *p["out_specs"]),
                      check_vma=False)(*invals)
  return out[0], list(out[1:])


def _cond(eqn, invals):
  def branch(closed):
    return lambda *ops: _eval(closed.jaxpr, closed.consts, list(ops))
  return jax.lax.switch(invals[0], [branch(b) for b in eqn.params["branches"]],
                        *invals[1:])


_RULES = {
    "while": _while, "scan": _scan, "pjit": _call("jaxpr"),
    "jit": _call("jaxpr"), "closed_call": _call("call_jaxpr"),
    "remat": _call("jaxpr"), "checkpoint": _call("jaxpr"),
    "custom_jvp_call": _call("call_jaxpr"),
    "custom_vjp_call": _call("call_jaxpr"), "shard_map": _shard_map,
    "cond": _cond,
}
