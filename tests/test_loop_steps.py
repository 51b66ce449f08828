"""Dependent loop steps read from a program's loops, and each method's own
count of them."""

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from farkle_jax.game import roll_tables
from farkle_jax.game import rules as rules_lib
from farkle_jax.game.layout import StateLayout
from farkle_jax.solver import loop_steps, methods
from test_ordered import settings


def test_nested_static_and_dynamic_loops():
  def fn(x, n):
    def outer(i, x):
      return jax.lax.fori_loop(0, n + i, lambda j, y: y + 1.0, x)
    return jax.lax.fori_loop(0, 5, outer, x)

  # Inner trips n + i for i = 0..4: 3+4+5+6+7.
  assert loop_steps.count(fn, jnp.zeros(()), jnp.asarray(3)) == 25


def test_data_dependent_while_and_plain_scan():
  def fn(x):
    x = jax.lax.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, x)
    y, _ = jax.lax.scan(lambda c, _: (c + 1.0, None), x, None, length=7)
    return y

  assert loop_steps.count(fn, jnp.asarray(1.0)) == 4 + 7
  assert loop_steps.count(fn, jnp.asarray(20.0)) == 0 + 7


def test_an_empty_body_still_takes_a_step():
  def fn(x, n):
    return jax.lax.fori_loop(
        0, 3, lambda i, x: jax.lax.fori_loop(0, n, lambda j, y: y, x), x)

  assert loop_steps.count(fn, jnp.zeros(()), jnp.asarray(0)) == 3



def test_a_branch_counts_the_loops_of_the_branch_taken():
  def fn(x, pick):
    return jax.lax.cond(
        pick, lambda x: jax.lax.fori_loop(0, 4, lambda i, y: y + 1.0, x),
        lambda x: jax.lax.while_loop(lambda y: y < 3.0, lambda y: y + 1.0, x),
        x)

  assert loop_steps.count(fn, jnp.zeros(()), jnp.asarray(True)) == 4
  assert loop_steps.count(fn, jnp.zeros(()), jnp.asarray(False)) == 3

def _scans(jaxpr):
  for eqn in jaxpr.eqns:
    if eqn.primitive.name == "scan":
      yield eqn
      yield from _scans(eqn.params["jaxpr"].jaxpr)


def test_scan_roles_read_from_types_match_the_structure():
  """JAX 0.11 no longer names a scan's consts and carry counts (seen on the
  GPU machine); reading them off the types must give the carry and xs
  that `fn` is written with (its consts: the operands left, whatever JAX
  hoists), and what JAX names where it still names them (0.10)."""
  w = jnp.arange(4.0)

  def fn(c0, c1, xs, n):
    def body(carry, x):
      a, b = carry
      inner, _ = jax.lax.scan(lambda d, _: (d + n, None), a, None, length=3)
      return (inner * w, b + x.sum()), (a[0], x * 2.0)
    return jax.lax.scan(body, (c0, c1), xs)

  args = (jnp.zeros(4), jnp.zeros(()), jnp.ones((5, 2, 4)), jnp.asarray(1.0))
  eqns = list(_scans(jax.make_jaxpr(fn)(*args).jaxpr))
  assert len(eqns) == 2
  # (carry, xs) of the outer scan and of the inner one, as fn writes them.
  for eqn, (ncarry, nxs) in zip(eqns, [(2, 1), (1, 0)]):
    roles = (len(eqn.invars) - ncarry - nxs, ncarry)
    bare = {k: v for k, v in eqn.params.items()
            if k not in ("num_consts", "num_carry")}
    assert loop_steps._scan_split(eqn.replace(params=bare)) == roles
    if "num_consts" in eqn.params:
      assert (eqn.params["num_consts"], eqn.params["num_carry"]) == roles
  if "num_consts" in eqns[0].params:
    assert [e.params["num_consts"] for e in eqns] == [2, 1]


def _launches(x):
  """A Pallas kernel (interpreted: any backend) whose own loop adds its
  input five times."""
  def kernel(x_ref, out_ref):
    out_ref[...] = jax.lax.fori_loop(
        0, 5, lambda i, y: y + x_ref[...], jnp.zeros_like(x_ref[...]))
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(
      x.shape, x.dtype), interpret=True)(x)


def test_a_kernel_launch_is_one_plain_operation():
  """The loops inside a kernel run within its launch: a loop iteration
  that launches kernels (the wavefront's chunk row on a GPU) is one step,
  and a launch outside loops adds none, as any operation."""
  def fn(x, n):
    x = _launches(x)
    x = jax.lax.fori_loop(0, n, lambda i, x: _launches(_launches(x)), x)
    return jax.lax.while_loop(lambda x: x[0] < 1e5, _launches, x)

  x = jnp.ones(8)
  assert loop_steps.count(_launches, x) == 0
  # 5 after the first launch, 5**7 after the fori_loop's 3 steps, 5**8
  # after the while's one.
  assert loop_steps.count(fn, x, jnp.asarray(3)) == 3 + 1
  assert float(fn(x, jnp.asarray(3))[0]) == 5.0 ** 8


# ordered-newton on minimal rules (no penalty reads: the same program as
# ordered) in the thorough tier. wavefront-pallas: the wavefront with its
# chunk rows in the Pallas kernel, as a GPU runs it (interpreted on a CPU).
@pytest.mark.parametrize("name, method", [
    (name, method) if (name, method) != ("minimal", "ordered-newton")
    else pytest.param(name, method, marks=pytest.mark.thorough)
    for name in ("facebook", "minimal")
    for method in ("ordered", "ordered-newton", "wavefront",
                   "value_iteration")] + [("minimal", "wavefront-pallas")])
def test_each_method_counts_its_steps_as_its_loops_run(name, method):
  # Small games: every loop step calls back to the host here.
  rules = (rules_lib.facebook(floor=-150, goal=600) if name == "facebook"
           else rules_lib.minimal(goal=400))
  layout = StateLayout(rules, chunk_keys=256)
  chosen = settings(method=method.split("-")[0],
                    newton=method.endswith("newton"))
  if method.endswith("pallas"):
    chosen = chosen._replace(kernel="pallas")
  m = methods.build(layout, roll_tables.build(rules), chosen)
  # Placed as a sweep leaves it: the second sweep (and its count) then
  # reuses the first's program instead of compiling it again.
  state = jax.tree.map(lambda x, s: jax.device_put(x, s.sharding),
                       m.init(), m.state_shape)
  sweep = jax.jit(m.sweep)
  for _ in range(2):  # the first sweep of the ordered method differs
    read = loop_steps.count(m.sweep, state, m.tables)
    state, _, _, steps = sweep(state, m.tables)
    assert read == int(steps) > 0
