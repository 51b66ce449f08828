"""Independent reference for tests: scoring, brute-force rolls, a plain solver.

Nothing here uses farkle_jax's scoring, tables, layout or solver: the scorer is
written from the rule text of model.md for the two reference rule sets, roll
distributions come from all 6^n ordered rolls, and the solver is a direct
transcription of the equations with NumPy arrays indexed by (b, d, f, e).
"""

from __future__ import annotations

import collections
import fcntl
import functools
import hashlib
import itertools
import os
import pickle
from fractions import Fraction

import numpy as np

NEG = float("-inf")


def _read_only(out):
  """Marks every array in a (nested) result read-only; returns it."""
  if isinstance(out, np.ndarray):
    out.setflags(write=False)
  elif isinstance(out, dict):
    for x in out.values():
      _read_only(x)
  elif isinstance(out, (list, tuple)):
    for x in out:
      _read_only(x)
  return out


def _kept(solver):
  """Keeps a solver's results for the test session: many tests ask for the
  same small games. Their arrays come back read-only, so no caller can
  change the values another one reads (callers must not change the lists
  and dicts that hold them either)."""
  cached = functools.lru_cache(maxsize=None)(functools.partial(_shared,
                                                               solver))

  @functools.wraps(solver)
  def solve_once(*args, **kwargs):
    if any(isinstance(x, np.ndarray) for x in (*args, *kwargs.values())):
      return _read_only(solver(*args, **kwargs))   # a start: not kept
    return _read_only(cached(*args, **kwargs))
  return solve_once


def _shared(solver, *args, **kwargs):
  """`solver(*args, **kwargs)`, solved once for all the processes that
  name the same folder in REFERENCE_RESULTS (the first to ask solves, under
  a lock; the others read its result; the suite keeps the folder across
  runs, see conftest)."""
  folder = os.environ.get("REFERENCE_RESULTS")
  if not folder:
    return solver(*args, **kwargs)
  os.makedirs(folder, exist_ok=True)
  name = hashlib.sha256(repr((solver.__name__, args, sorted(kwargs.items())))
                        .encode()).hexdigest()[:24]
  path = os.path.join(folder, name + ".pkl")
  with open(path + ".lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
      with open(path, "rb") as f:
        return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
      pass   # not solved yet, or a damaged file: solve (again)
    out = solver(*args, **kwargs)
    with open(path + ".tmp", "wb") as f:
      pickle.dump(out, f)
    os.replace(path + ".tmp", path)
    return out


@functools.lru_cache(maxsize=None)
def best_points(rules: str, counts: tuple[int, ...]) -> float:
  """Best points of using exactly these dice (counts of faces 1..6); -inf if
  they cannot all score. `rules` is "facebook", "minimal" or "kcd" (the
  Kingdom Come: Deliverance sheet: n of a kind doubles the triple, runs
  1-5 = 500, 2-6 = 750, 1-6 = 1500, no three pairs)."""
  if sum(counts) == 0:
    return 0
  if rules == "kcd":
    return _kcd_points(counts)
  best = NEG
  c = list(counts)
  if rules == "facebook" and counts == (1, 1, 1, 1, 1, 1):
    best = max(best, 1500)
  if rules == "facebook" and sorted(counts) == [0, 0, 0, 2, 2, 2]:
    best = max(best, 750)
  for face in range(6):
    triple = 1000 if face == 0 else 100 * (face + 1)
    kinds = range(3, c[face] + 1) if rules == "facebook" else [3]
    for k in kinds:
      if c[face] >= k:
        rest = c.copy()
        rest[face] -= k
        best = max(best, triple * (k - 2) + best_points(rules, tuple(rest)))
  for face, pts in ((0, 100), (4, 50)):
    if c[face]:
      rest = c.copy()
      rest[face] -= 1
      best = max(best, pts + best_points(rules, tuple(rest)))
  return best


def _kcd_points(counts: tuple[int, ...]) -> float:
  if sum(counts) == 0:
    return 0
  best = NEG
  c = list(counts)
  for run, pts in (((1, 1, 1, 1, 1, 1), 1500), ((1, 1, 1, 1, 1, 0), 500),
                   ((0, 1, 1, 1, 1, 1), 750)):
    rest = [x - y for x, y in zip(c, run)]
    if min(rest) >= 0:
      best = max(best, pts + _kcd_points(tuple(rest)))
  for face in range(6):
    triple = 1000 if face == 0 else 100 * (face + 1)
    for k in range(3, c[face] + 1):
      rest = c.copy()
      rest[face] -= k
      best = max(best, triple * 2 ** (k - 3) + _kcd_points(tuple(rest)))
  for face, pts in ((0, 100), (4, 50)):
    if c[face]:
      rest = c.copy()
      rest[face] -= 1
      best = max(best, pts + _kcd_points(tuple(rest)))
  return best


@functools.lru_cache(maxsize=None)
def best_points_wild(rules: str, counts: tuple[int, ...], jokers: int
                     ) -> float:
  """Best points of using exactly these dice (counts of faces 1..6) and
  `jokers` devil's heads, on the "kcd" sheet: the best split of the dice
  into groups, each group one combination with at least one die that is
  not a joker, the jokers in it standing for any faces; -inf if none. By
  brute force over every partition of the dice into groups."""
  assert rules == "kcd"
  dice = [f for f in range(1, 7) for _ in range(counts[f - 1])]
  return _best_partition(tuple(dice + [0] * jokers))


def _best_partition(dice: tuple[int, ...]) -> float:
  """Best sum over the partitions of `dice` (0: a joker) into groups that
  each score (`_wild_group`); -inf if none. The first die's group is
  chosen among the subsets that hold it."""
  if not dice:
    return 0
  best = NEG
  rest = dice[1:]
  for mask in range(2 ** len(rest)):
    group = (dice[0],) + tuple(d for i, d in enumerate(rest) if mask >> i & 1)
    pts = _wild_group(group)
    if pts is not None:
      others = tuple(d for i, d in enumerate(rest) if not mask >> i & 1)
      best = max(best, pts + _best_partition(others))
  return best


def _wild_group(group: tuple[int, ...]) -> int | None:
  """Points of one group as one combination of the kcd sheet, its jokers
  (0) any faces; None if it is none or holds no real die."""
  real = [d for d in group if d]
  if not real:
    return None
  n, found = len(group), []
  if n == 1 and real[0] in (1, 5):
    found.append(100 if real[0] == 1 else 50)
  if n >= 3 and len(set(real)) == 1:
    found.append((1000 if real[0] == 1 else 100 * real[0]) * 2 ** (n - 3))
  for run, pts in (({1, 2, 3, 4, 5}, 500), ({2, 3, 4, 5, 6}, 750),
                   ({1, 2, 3, 4, 5, 6}, 1500)):
    if n == len(run) and len(set(real)) == len(real) and set(real) <= run:
      found.append(pts)
  return max(found) if found else None


def roll_choices(rules: str, roll: tuple[int, ...]) -> dict[int, int]:
  """For an ordered roll (faces 1..6): best points per number of dice used."""
  out: dict[int, int] = {}
  n = len(roll)
  for mask in range(1, 2 ** n):
    counts = [0] * 6
    for i in range(n):
      if mask >> i & 1:
        counts[roll[i] - 1] += 1
    p = best_points(rules, tuple(counts))
    if p > NEG:
      k = bin(mask).count("1")
      out[k] = max(out.get(k, 0), int(p))
  return out


@functools.lru_cache(maxsize=None)
def _sorted_choices(rules: str, roll: tuple[int, ...]) -> dict[int, int]:
  return roll_choices(rules, roll)


@functools.lru_cache(maxsize=None)
def _ordered_chance(roll: tuple[int, ...], faces: tuple) -> Fraction:
  """The chance of one ordered roll: the product of its dice's chances (the
  same for every ordering, hence keyed by the sorted faces)."""
  p = Fraction(1)
  for x in roll:
    p *= faces[x - 1]
  return p


@functools.lru_cache(maxsize=None)
def distribution(rules: str, n: int, faces: tuple | None = None):
  """(P(farkle), {score set: probability}) from all 6^n ordered rolls; each
  ordered roll has chance 6^-n, or with `faces` (the chances of faces 1..6
  of every die, Fractions) the product of its dice's chances."""
  sets: dict[tuple, Fraction] = {}
  farkle = Fraction(0)
  for roll in itertools.product(range(1, 7), repeat=n):
    key = tuple(sorted(roll))
    p = (Fraction(1, 6 ** n) if faces is None
         else _ordered_chance(key, faces))
    ch = _sorted_choices(rules, key)
    if not ch:
      farkle += p
    else:
      key = tuple(sorted(ch.items()))
      sets[key] = sets.get(key, 0) + p
  return farkle, {k: p for k, p in sets.items() if p}


@functools.lru_cache(maxsize=None)
def reach(rules: str, need: int, n: int = 6, tie: bool = False) -> float:
  """Best chance to add at least `need` points to the turn total before a
  farkle, rolling n dice and never stopping short (the final round's last
  turn), from the ordered-roll distributions. With `tie`, 50 points short
  is a tie the player may stop at for half a win."""
  if need <= 0:
    return 1.0
  farkle, sets = distribution(rules, n)
  roll = sum(float(p) * max(reach(rules, need - pts, 6 if k == n else n - k,
                                  tie)
                            for k, pts in sset)
             for sset, p in sets.items())
  return max(roll, 0.5) if tie and need == 50 else roll


def roll_value(dist, n: int, t: int, x_farkle, value):
  """The value of rolling n dice at turn total t (points): a farkle is worth
  `x_farkle`, every score set its best option, `value(t, n)` (scalars or
  arrays over keys). `dist` is `distribution(rules, n)`."""
  farkle, sets = dist
  roll = float(farkle) * x_farkle
  for sset, p in sets.items():
    best = None
    for k, pts in sset:
      v = value(t + pts, 6 if k == n else n - k)
      best = v if best is None else np.maximum(best, v)
    roll = roll + float(p) * best
  return roll


def roll_vector(dist, n: int, t: int, farkle_vec, value, step: int = 50):
  """roll_value for N players: vectors of every seat's win probability,
  the mover's first. A score set takes its first option of the highest
  mover value (channel 0); `t` counts score steps of `step` points."""
  farkle, sets = dist
  roll = float(farkle) * farkle_vec
  for sset, p in sets.items():
    best = None
    for k, pts in sset:
      o = value(t + pts // step, 6 if k == n else n - k)
      best = o if best is None else np.where(
          (o[..., 0] > best[..., 0])[..., None], o, best)
    roll = roll + float(p) * best
  return roll


@_kept
def solve(rules: str, goal: int, floor: int, tol: float = 1e-15,
          max_iter: int = 2000, entry: int = 0, final_round: bool = False,
          cap: int = 0, ties: str = "leader", penalty_count: int = 3,
          faces: tuple | None = None) -> tuple[np.ndarray, list]:
  """Solves a reference rule set with the given goal (and floor if it has a
  penalty). Returns W0[b, d, f, e] with scores indexed from the floor, and
  the in-turn values V[t][n - 1] (arrays over keys) of the last iteration.

  `entry` > 0: a player who has not banked yet (score 0; the rules must have
  no penalty) may bank only a turn total of at least `entry`.
  `final_round`: banking a total of at least the goal gives the opponent one
  last turn to finish strictly higher; turn totals up to `cap` points past
  the goal are followed, beyond it the mover wins.
  `penalty_count`: with the facebook rules, the farkle turns in a row that
  cost the penalty (1: every farkle).
  `faces`: the chances of faces 1..6 of every die (Fractions; None: fair).
  `rules` "kcd" has no bank minimum and no penalty, as "minimal"."""
  assert faces is None or not final_round
  step = 50
  bank_min = 300 if rules == "facebook" else 50
  penalty = 500 if rules == "facebook" else 0
  nf = penalty_count if penalty else 1
  low = floor if penalty else 0
  scores = np.arange(low, goal, step)
  nb = len(scores)
  b = scores[:, None, None, None]
  d = scores[None, :, None, None]
  f = np.arange(nf)[None, None, :, None]
  e = np.arange(nf)[None, None, None, :]
  shape = (nb, nb, nf, nf)
  bi, di, fi, ei = np.meshgrid(np.arange(nb), np.arange(nb), np.arange(nf),
                               np.arange(nf), indexing="ij")
  past = cap if final_round else 0
  t_max = (np.maximum(bank_min - step, goal - step - b + past)
           + 0 * d + 0 * f + 0 * e)
  if entry:
    t_max = np.maximum(t_max, np.where(b == 0, entry - step, 0))

  def last_turn(t):
    """[nb, nb] the chaser's (d) chance to pass the bar b + t."""
    out = np.zeros((nb, nb))
    for i, j in itertools.product(range(nb), range(nb)):
      c, x = scores[j], scores[i] + t
      least = entry if (entry and c == 0) else bank_min
      out[i, j] = reach(rules, max(x - c + step, least), 6,
                        ties == "shared" and x - c >= least)
    return out[:, :, None, None]

  chased = {}
  if final_round:
    chased = {t: last_turn(t) for t in range(0, int(t_max.max()) + step,
                                             step)}
  top = int(t_max.max())
  dists = {n: distribution(rules, n, faces) for n in range(1, 7)}
  w0 = np.full(shape, 0.5)
  for _ in range(max_iter):
    # Farkle: the opponent starts with (d, b', e, f').
    penalised = (fi == nf - 1) & (penalty > 0)
    b_next = np.where(penalised, np.maximum(0, bi - penalty // step), bi)
    x_farkle = 1 - w0[di, b_next, ei, (fi + 1) % nf]
    V: dict[int, np.ndarray] = {}

    def value(t, n):
      if t > top:
        return np.ones(shape)
      return V[t][n - 1]

    for t in range(top, -1, -step):
      row = []
      for n in range(1, 7):
        roll = roll_value(dists[n], n, t, x_farkle, value)
        w = roll
        if t >= bank_min:
          total = bi + t // step
          won = total >= nb
          bank = np.where(won, 1.0,
                          1 - w0[di, np.minimum(total, nb - 1), ei, 0])
          if final_round:
            bank = np.where(won, 1 - chased[t], bank)
          on_board = (b != 0) | (t >= entry)
          w = np.where(on_board, np.maximum(roll, bank), roll)
        row.append(np.where(t > t_max, 1.0, w))
      V[t] = row
    new = V[0][5]
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0, V


@_kept
def solve_on_board(goal: int, floor: int, entry: int, tol: float = 1e-15,
                   max_iter: int = 2000) -> np.ndarray:
  """The Facebook rules (with their penalty) and an entry minimum, with an
  explicit on-board flag per player: W0[b, d, f, e, g, h], scores indexed
  from the floor, g (h) = 1 once the player to move (the opponent) has
  banked. A player not on the board may bank only t >= entry; banking puts
  them on the board. Keys off the board with a positive score exist here
  but no play reaches them."""
  step, bank_min, penalty, nf = 50, 300, 500, 3
  scores = np.arange(floor, goal, step)
  nb = len(scores)
  shape = (nb, nb, nf, nf, 2, 2)
  bi, di, fi, ei, gi, hi = np.meshgrid(*(np.arange(n) for n in shape),
                                       indexing="ij")
  b = scores[bi]
  least = np.where(gi == 1, bank_min, max(bank_min, entry))
  t_max = np.maximum(least - step, goal - step - b)
  top = int(t_max.max())
  dists = {n: distribution("facebook", n) for n in range(1, 7)}
  w0 = np.full(shape, 0.5)
  for _ in range(max_iter):
    b_next = np.where(fi == nf - 1, np.maximum(0, bi - penalty // step), bi)
    x_farkle = 1 - w0[di, b_next, ei, (fi + 1) % nf, hi, gi]
    V: dict[int, list] = {}

    def value(t, n):
      return np.ones(shape) if t > top else V[t][n - 1]

    for t in range(top, -1, -step):
      row = []
      for n in range(1, 7):
        roll = roll_value(dists[n], n, t, x_farkle, value)
        total = bi + t // step
        bank = np.where(total >= nb, 1.0,
                        1 - w0[di, np.minimum(total, nb - 1), ei, 0, hi, 1])
        w = np.where(t >= least, np.maximum(roll, bank), roll)
        row.append(np.where(t > t_max, 1.0, w))
      V[t] = row
    new = V[0][5]
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0


def _key_turn(rules: str, goal: int, floor: int, w0: np.ndarray,
              key: tuple[int, int, int, int]) -> tuple:
  """What a backward pass over one key's turn needs: (step, bank minimum,
  banked-score count, b, d, e indices, the last turn total short of the
  goal, the value of a farkle read from `w0`)."""
  step = 50
  bank_min = 300 if rules == "facebook" else 50
  penalty = 500 if rules == "facebook" else 0
  nf = 3 if penalty else 1
  low = floor if penalty else 0
  bi, di, fi, ei = key
  t_max = max(bank_min - step, goal - step - (low + bi * step))
  b_next = bi
  if penalty and fi == nf - 1:
    b_next = max(0, bi - penalty // step)
  x_farkle = 1 - w0[di, b_next, ei, (fi + 1) % nf]
  return step, bank_min, w0.shape[0], bi, di, ei, t_max, x_farkle


def start_value(rules: str, goal: int, floor: int, w0: np.ndarray,
                key: tuple[int, int, int, int]) -> float:
  """W(t = 0, n = 6) of one key (b, d, f, e indices from the floor) by one
  backward pass over its turn, reading banks and farkles from `w0`: one
  Bellman update of that key, for checking a solution at chosen keys."""
  step, bank_min, nb, bi, di, ei, t_max, x_farkle = _key_turn(
      rules, goal, floor, w0, key)
  values: dict[tuple[int, int], float] = {}

  def value(t, n):
    return 1.0 if t > t_max else values[t, n]

  for t in range(t_max, -1, -step):
    for n in range(1, 7):
      roll = roll_value(distribution(rules, n), n, t, x_farkle, value)
      w = roll
      if t >= bank_min:
        total = bi + t // step
        w = max(roll, 1.0 if total >= nb else 1 - w0[di, total, ei, 0])
      values[t, n] = w
  return values[0, 6]


# Strategies of one turn and their evaluation over the joint state.

BANK_MIN = {"facebook": 300, "minimal": 50, "kcd": 50}


def expected_turn(rules: str, bank_at: int | None = None,
                  cap: int = 40_000, farkle_value: float = 0.0,
                  faces: tuple | None = None
                  ) -> dict[tuple[int, int], float]:
  """T(n, t) by a direct recursion: maximum mean points banked from (n, t),
  banking only where allowed (and exactly at t >= bank_at if given); every
  state at or above `cap` banks; a farkle is worth `farkle_value`; `faces`
  as in `distribution`."""
  memo: dict[tuple[int, int], float] = {}
  bank_min = BANK_MIN[rules]

  def value(n: int, t: int) -> float:
    if t >= cap:
      return float(t)
    if (n, t) in memo:
      return memo[(n, t)]
    farkle, sets = distribution(rules, n, faces)
    roll = float(farkle) * farkle_value
    for sset, p in sets.items():
      roll += float(p) * max(value(6 if k == n else n - k, t + pts)
                             for k, pts in sset)
    if t >= bank_min and (t >= bank_at if bank_at is not None else t >= roll):
      out = float(t)
    else:
      out = roll
    memo[(n, t)] = out
    return out

  import sys
  sys.setrecursionlimit(100_000)
  for t in range(cap - 50, -1, -50):  # fill from the top: shallow recursion
    for n in range(1, 7):
      value(n, t)
  return memo


def turn_outcomes(rules: str, goal: int, b: int, prefer, bank_at) -> dict:
  """{("bank", t) | "win" | "farkle": probability} of one turn from banked
  score b: bank when bank_at(n, t) (where allowed), else roll and take the
  winning scoring if any, else the one of highest prefer(n, t)."""
  bank_min = BANK_MIN[rules]
  memo: dict = {}

  def wins(t):
    return b + t >= goal and t >= bank_min

  def out(n, t):
    if (n, t) in memo:
      return memo[(n, t)]
    if wins(t):
      res = {"win": 1.0}
    elif t >= bank_min and bank_at(n, t):
      res = {("bank", t): 1.0}
    else:
      farkle, sets = distribution(rules, n)
      res = {"farkle": float(farkle)}
      for sset, p in sets.items():
        opts = [(6 if k == n else n - k, t + pts) for k, pts in sset]
        win = [o for o in opts if wins(o[1])]
        choice = win[0] if win else max(opts, key=lambda o: prefer(*o))
        for key, q in out(*choice).items():
          res[key] = res.get(key, 0.0) + float(p) * q
    memo[(n, t)] = res
    return res

  return out(6, 0)


def evaluate(rules: str, goal: int, floor: int, policy_a, policy_b,
             tol: float = 1e-15) -> tuple[np.ndarray, np.ndarray]:
  """Values A[b, d, f, e] (A to move) and B[...] (B to move) of two
  policies (prefer, bank_at) by iteration over the start-of-turn states."""
  step = 50
  penalty = 500 if rules == "facebook" else 0
  nf = 3 if penalty else 1
  low = floor if penalty else 0
  scores = list(range(low, goal, step))
  nb = len(scores)
  outs = [{b: turn_outcomes(rules, goal, b, *pol) for b in scores}
          for pol in (policy_a, policy_b)]
  vals = [np.full((nb, nb, nf, nf), 0.5), np.full((nb, nb, nf, nf), 0.5)]
  while True:
    change = 0.0
    for me in (0, 1):
      other = vals[1 - me]
      new = np.zeros_like(other)
      for bi, b in enumerate(scores):
        for key, p in outs[me][b].items():
          if key == "win":
            new[bi] += p
          elif key == "farkle":
            for f in range(nf):
              bn = bi
              if penalty and f == nf - 1:
                bn = max(0, bi - penalty // step)
              new[bi, :, f, :] += p * (1 - other[:, bn, :, (f + 1) % nf])
          else:
            new[bi] += p * (1 - other[:, bi + key[1] // step, :, 0])[:, None]
      change = max(change, np.abs(new - vals[me]).max())
      vals[me] = new
    if change < tol:
      return vals[0], vals[1]


# N players (docs/model.md §8): the value of a state is the vector of every
# player's win probability, seats counted from the player to move.

@_kept
def solve_players(players: int, goal: int, tol: float = 1e-15,
                  max_iter: int = 5000, entry: int = 0,
                  start: np.ndarray | None = None,
                  faces: tuple | None = None, cap: int | None = None,
                  hand: tuple | None = None, ties: str = "leader"
                  ) -> tuple[np.ndarray, dict]:
  """The minimal rules for `players` players, each maximizing their own
  win probability. Returns W0[s_0, .., s_{N-1}, i]: scores (index = points
  / 50) in turn order from the player to move, and seat i's probability;
  and the in-turn vectors V[t][n - 1] (t in score steps) of the last sweep.
  `entry` > 0 (points): a mover with 0 banked may bank only a turn total of
  at least `entry` (no score falls in these rules, so 0 is "not on the
  board"). `start` (W0's shape): where the iteration starts instead of
  1/N everywhere; from a claimed solution a sweep or two check that it is
  this iteration's fixed point. `faces`: the chances of faces 1..6 of
  every die (Fractions; None: fair). `cap` (points): the final round
  (`final_round_players`, with `ties`), turn totals followed up to `cap`
  past the goal; None: reaching the goal wins. `hand`: six dice that
  differ, each die's chances of faces 1..6 (Fractions), shared by every
  player; the in-turn states are then the positions of the dice left
  (`hand_distribution`), V[t][i] that of `hand_states(hand)[i]`.

  Ties for the mover: banking is preferred to rolling at equal value, and
  among scorings the first of the score set (fewest dice used; with
  `hand`, the first of its options in order of the dice left) wins; the
  other players' values decide nothing.
  """
  assert hand is None or (faces is None and cap is None)
  step, bank_min, N = 50, 50, players
  nb = goal // step
  shape = (nb,) * N
  idx = np.meshgrid(*(np.arange(nb) for _ in range(N)), indexing="ij")
  s0 = idx[0]
  least = np.where(s0 == 0, max(bank_min, entry), bank_min) // step  # per key
  if hand is None:
    dists = {n: distribution("minimal", n, faces) for n in range(1, 7)}
    rolled = lambda n, t, fv, value: roll_vector(dists[n], n, t, fv, value)
    states = list(range(1, 7))
  else:
    dists = _hands("minimal", hand)
    rolled = lambda left, t, fv, value: _hand_vector(dists[left], t, fv,
                                                     value)
    states = hand_states(hand)
  where = {state: i for i, state in enumerate(states)}
  win = np.zeros(shape + (N,))
  win[..., 0] = 1.0
  w0 = np.full(shape + (N,), 1.0 / N) if start is None else start.copy()
  past = 0 if cap is None else cap // step
  top = nb - 1 + past
  last = np.zeros((past,) + shape + (N,))   # banks reaching goal + j steps
  for j in range(past):
    for key in itertools.product(range(nb), repeat=N):
      chasers = tuple((i, key[i] * step) for i in range(1, N))
      last[(j,) + key] = final_round_players(
          N, goal, cap, chasers, goal + j * step, 0, faces, ties=ties)

  def pass_on(w0, total):
    """Current-seat vector after the turn passes with the mover at
    `total` (index): the next mover's vector, seats rotated by one."""
    nxt = w0[tuple(idx[1:]) + (np.minimum(total, nb - 1),)]
    return np.roll(nxt, 1, axis=-1)

  for _ in range(max_iter):
    farkle_vec = pass_on(w0, s0)
    V: dict[int, list] = {}

    def value(t, n):
      return win if t > top else V[t][where[n]]

    for t in range(top, -1, -1):
      row = []
      for n in states:
        roll = rolled(n, t, farkle_vec, value)
        w = roll
        if t >= 1:   # bank minimum 50: any t > 0, unless still to enter
          total = s0 + t
          bank = np.where((total >= nb)[..., None], win, pass_on(w0, total))
          if past:
            at = np.clip(total - nb, 0, past - 1)
            at = last[(at,) + tuple(idx)]
            bank = np.where(((total >= nb) & (total < nb + past))[..., None],
                            at, bank)
          take = (t >= least) & (bank[..., 0] >= roll[..., 0])
          w = np.where(take[..., None], bank, roll)
        done = (s0 + t >= nb + past) & (t >= least)
        row.append(np.where(done[..., None], win, w))
      V[t] = row
    new = V[0][-1]                 # the whole hand: six dice, or all left
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0, V


def hand_states(hand: tuple) -> list:
  """The in-turn dice states of a hand of dice that differ: the positions
  of the dice left, every nonempty subset, all six last."""
  return sorted(_hands("minimal", hand), key=lambda s: (len(s), s))


def _hand_vector(dist, t: int, farkle_vec, value, step: int = 50):
  """roll_vector for a hand of dice that differ: `dist` is
  `hand_distribution`, whose options name the dice left."""
  farkle, sets = dist
  roll = float(farkle) * farkle_vec
  for oset, p in sets.items():
    best = None
    for rest, pts in oset:
      o = value(t + pts // step, rest)
      best = o if best is None else np.where(
          (o[..., 0] > best[..., 0])[..., None], o, best)
    roll = roll + float(p) * best
  return roll


@functools.lru_cache(maxsize=None)
def final_round_players(players: int, goal: int, cap: int, chasers: tuple,
                        bar: int, holder, faces: tuple | None = None,
                        rules: str = "minimal", ties: str = "leader"
                        ) -> tuple:
  """Every seat's chance to win the final round of `rules` ("minimal",
  bank minimum 50, or "facebook", 300), seats counted from the player who
  reached the goal.

  `chasers`: ((seat, banked score), ..) still to play, in order; each plays
  one turn and wins only by finishing strictly higher than `bar` (points),
  held by seat `holder` (a seat, or a tuple of the seats tied at the bar);
  a chaser who does holds the bar for the rest. With `ties` "shared" a
  chaser may also bank a total equal to the bar and join its holders, who
  share the win equally at the end. A total of `cap` points past the goal
  or more wins at once. Each chaser maximizes their own chance (a share
  counted as its fraction); at equal value banking first, then a score
  set's first option."""
  holders = (holder,) if isinstance(holder, int) else tuple(holder)
  if not chasers:
    return tuple(1.0 / len(holders) if i in holders else 0.0
                 for i in range(players))
  (seat, score), rest = chasers[0], chasers[1:]
  on = lambda b, h: final_round_players(players, goal, cap, rest, b, h,
                                        faces, rules, ties)
  fail = on(bar, holders)
  dists = {n: distribution(rules, n, faces) for n in range(1, 7)}

  @functools.lru_cache(maxsize=None)
  def turn(x: int, n: int) -> tuple:
    if x >= goal + cap:
      return tuple(float(i == seat) for i in range(players))
    farkle, sets = dists[n]
    roll = [float(farkle) * v for v in fail]
    for sset, p in sets.items():
      best = None
      for k, pts in sset:
        o = turn(x + pts, 6 if k == n else n - k)
        if best is None or o[seat] > best[seat]:
          best = o
      roll = [r + float(p) * b for r, b in zip(roll, best)]
    bank = None
    if x - score >= BANK_MIN[rules]:
      if x > bar:
        bank = on(x, (seat,))
      elif x == bar and ties == "shared":
        bank = on(bar, holders + (seat,))
    if bank is not None and bank[seat] >= roll[seat]:
      return bank
    return tuple(roll)

  return turn(score, 6)


@_kept
def solve_players_penalty(players: int, goal: int, floor: int,
                          penalty_count: int = 3, tol: float = 1e-15,
                          max_iter: int = 5000,
                          start: np.ndarray | None = None,
                          cap: int | None = None, ties: str = "leader",
                          entry: int = 0) -> tuple[np.ndarray, int]:
  """The facebook rules for `players` players (bank minimum 300; the
  `penalty_count`-th farkle in a row costs 500 points, not below `floor`,
  and starts the count again; a bank starts it again too), each maximizing
  their own win probability, by value iteration from 1/N (or `start`).
  `cap` (points): the final round (`final_round_players`, with `ties`),
  turn totals followed up to `cap` past the goal; None: reaching the goal
  wins. `entry` > 0 (points): a player who has not banked yet may bank
  only a turn total of at least `entry`; every key then carries an
  explicit on-board flag per player (a penalty can take a score to 0 or
  below before the first bank, so the score cannot tell).

  Returns W0[s_0, .., s_{N-1}, f_0, .., f_{N-1}, i] (with `entry`:
  W0[s.., f.., g_0, .., g_{N-1}, i], g = 1 once that player has banked):
  scores as indices (points - floor) / 50, farkle counts and flags in
  turn order from the player to move, seat i's probability; and the
  iterations it took. Keys off the board with a positive score exist here
  but no play reaches them. Ties as `solve_players`: banking first, then
  the first option of a score set.
  """
  step, bank_min, penalty, N = 50, 300 // 50, 500 // 50, players
  nb, nf = (goal - floor) // step, penalty_count
  flags = (2,) * N if entry else ()
  shape = (nb,) * N + (nf,) * N + flags
  idx = np.meshgrid(*(np.arange(m) for m in shape), indexing="ij")
  s, f, g = idx[:N], idx[N:2 * N], idx[2 * N:]
  past = 0 if cap is None else cap // step
  least = (np.where(g[0] == 1, bank_min, max(bank_min, entry // step))
           if entry else np.full(shape, bank_min))
  t_max = np.maximum(least - 1, nb - 1 - s[0] + past)
  dists = {n: distribution("facebook", n) for n in range(1, 7)}
  win = np.zeros(shape + (N,))
  win[..., 0] = 1.0
  w0 = np.full(shape + (N,), 1.0 / N) if start is None else start.copy()
  last = np.zeros((past,) + (nb,) * N + (N,))   # banks at goal + j steps
  for j in range(past):
    for key in itertools.product(range(nb), repeat=N):
      chasers = tuple((i, floor + key[i] * step) for i in range(1, N))
      last[(j,) + key] = final_round_players(
          N, goal, cap, chasers, goal + j * step, 0, None, "facebook",
          ties)
  # The next mover's key after a farkle, and after a bank of t (scores in
  # turn order from the next mover: the one who moved comes last).
  three = f[0] == nf - 1
  lost = np.where(three, np.maximum(0, s[0] - penalty), s[0])
  counts = np.where(three, 0, f[0] + 1)
  after_farkle = (tuple(s[1:]) + (lost,) + tuple(f[1:]) + (counts,)
                  + tuple(g[1:]) + tuple(g[:1]))

  def after_bank(total):
    return (tuple(s[1:]) + (np.minimum(total, nb - 1),) + tuple(f[1:])
            + (np.zeros_like(total),) + tuple(g[1:])
            + ((np.ones_like(total),) if entry else ()))

  for it in range(1, max_iter + 1):
    farkle_vec = np.roll(w0[after_farkle], 1, axis=-1)
    V: dict[int, list] = {}

    def value(t, n):
      return win if t > int(t_max.max()) else V[t][n - 1]

    for t in range(int(t_max.max()), -1, -1):
      row = []
      for n in range(1, 7):
        roll = roll_vector(dists[n], n, t, farkle_vec, value)
        w = roll
        if t >= bank_min:
          total = s[0] + t
          bank = np.where((total >= nb)[..., None], win,
                          np.roll(w0[after_bank(total)], 1, axis=-1))
          if past:
            at = last[(np.clip(total - nb, 0, past - 1),) + tuple(s)]
            bank = np.where(((total >= nb) & (total < nb + past))[..., None],
                            at, bank)
          take = (t >= least) & (bank[..., 0] >= roll[..., 0])
          w = np.where(take[..., None], bank, roll)
        row.append(np.where((t > t_max)[..., None], win, w))
      V[t] = row
    new = V[0][5]
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0, it


def players_turn_bust(players: int, goal: int, w0: np.ndarray,
                      key: tuple[int, ...]) -> dict:
  """{(t, n): (bust, rolling)} of one start-of-turn key of
  `solve_players` (score indices in turn order from the mover): the chance
  that the mover's turn ends in a farkle from in-turn state (t score
  steps, n dice), playing as `w0` says, by a backward pass over this one
  turn (bust: 0 where the mover banks, bank >= roll; rolling: when the
  mover rolls on there). The option a score set takes is its first of the
  highest mover value, as `solve_players` takes it; the states where
  options of that value farkle with different chances are listed under
  "ties". No entry minimum."""
  step, s0 = 50, key[0]
  nb = goal // step
  win = np.eye(players)[0]

  def pass_on(total):   # the next mover's vector, seats rotated by one
    return np.roll(w0[tuple(key[1:]) + (min(total, nb - 1),)], 1)

  t_max, x_farkle = nb - s0 - 1, pass_on(s0)
  values, out = {}, {"ties": set()}

  def at(t, n):   # (vector, bust) of a state: a win banks at once
    return (win, 0.0) if t > t_max else (values[t, n], out[t, n][0])

  for t in range(t_max, -1, -1):
    for n in range(1, 7):
      farkle, sets = distribution("minimal", n)
      roll, bust = float(farkle) * x_farkle, float(farkle)
      for sset, p in sets.items():
        reached = [at(t + pts // step, 6 if k == n else n - k)
                   for k, pts in sset]
        top = max(v[0] for v, _ in reached)
        taken = [(v, b) for v, b in reached if v[0] == top]
        if len({b for _, b in taken}) > 1:
          out["ties"].add((t, n))
        roll = roll + float(p) * taken[0][0]
        bust += float(p) * taken[0][1]
      bank = pass_on(s0 + t) if t >= 1 else None   # bank minimum 50
      banks = bank is not None and bank[0] >= roll[0]
      values[t, n] = bank if banks else roll
      out[t, n] = (0.0 if banks else bust, bust)
  return out


@functools.lru_cache(maxsize=None)
def hand_distribution(rules: str, hand: tuple, left: tuple,
                      wild: tuple = ()):
  """A hand of dice that differ: (P(farkle), {option set: probability}) of
  rolling the dice at positions `left` (0..5), from every ordered roll of
  them, each die with its own face chances (`hand[i]`, Fractions; faces of
  chance 0 skipped). An option set is ((dice left after, best points), ...)
  over the subsets of dice that score; setting every die aside leaves all
  six again. The dice at positions `wild` show a devil's head (a joker,
  `best_points_wild`) in place of their 1."""
  sets: dict[tuple, Fraction] = {}
  farkle = Fraction(0)
  live = [[f for f in range(1, 7) if hand[i][f - 1]] for i in left]
  for faces in itertools.product(*live):
    p = Fraction(1)
    for i, f in zip(left, faces):
      p *= hand[i][f - 1]
    options = hand_options(rules, left, tuple(
        0 if i in wild and f == 1 else f for i, f in zip(left, faces)))
    if not options:
      farkle += p
    else:
      key = tuple(sorted(options.items()))
      sets[key] = sets.get(key, 0) + p
  return farkle, sets


@functools.lru_cache(maxsize=None)
def _subsets(k: int) -> list[list[int]]:
  return [[j for j in range(k) if m >> j & 1] for m in range(1, 2 ** k)]


@functools.lru_cache(maxsize=None)
def hand_options(rules: str, left: tuple, faces: tuple) -> dict:
  """{dice positions left after: best points} of one ordered roll of the
  dice at positions `left` showing `faces` (0: a devil's head); kept, as
  every hand rolls the same faces (read only: shared between calls)."""
  options: dict[tuple, int] = {}
  for used in _subsets(len(left)):
    counts = [0] * 6
    for j in used:
      if faces[j]:
        counts[faces[j] - 1] += 1
    jokers = sum(1 for j in used if not faces[j])
    pts = (best_points_wild(rules, tuple(counts), jokers) if jokers
           else best_points(rules, tuple(counts)))
    if pts > NEG:
      rest = tuple(x for j, x in enumerate(left) if j not in used)
      rest = rest or tuple(range(6))
      options[rest] = max(options.get(rest, 0), int(pts))
  return options


def _hands(rules: str, hand: tuple, wild: tuple = ()):
  subsets = [tuple(x for x in range(6) if m >> x & 1) for m in range(1, 64)]
  return {s: hand_distribution(rules, hand, s, wild) for s in subsets}


@_kept
def solve_hands(rules: str, goal: int, hands: tuple, tol: float = 1e-15,
                max_iter: int = 500, wild: tuple | None = None
                ) -> np.ndarray:
  """Two players, each with a hand of `hands` (one hand: both play it),
  rules without a penalty ("minimal" or "kcd"): W0[b, d, f, e], the win
  probability of the mover (score b, hand f) against the opponent (score d,
  hand e), by value iteration over the in-turn states (t, dice left as
  positions of the mover's hand), held as V[t, left, b, d, e]."""
  step, bank_min = 50, BANK_MIN[rules]
  nb = rows = goal // step                 # t = 0 .. goal - step
  H = len(hands)
  bi = np.arange(nb)[:, None, None]
  t_max = (goal - step) // step - bi
  plans = [_hand_plans(rules, hand, step, w)
           for hand, w in zip(hands, wild or ((),) * len(hands))]
  w0 = np.full((nb, nb, H, H), 0.5)
  for _ in range(max_iter):
    other = w0.transpose(1, 0, 3, 2)       # [b, d, f, e] -> W0[d, b, e, f]
    new = np.empty_like(w0)
    for f, (plan, full) in enumerate(plans):
      x_farkle = 1 - other[:, :, f, :]     # [b, d, e]
      V = np.ones((rows + 1, len(plan), nb, nb, H))  # row `rows`: won
      for t in range(rows - 1, -1, -1):
        total = np.minimum(bi + t, nb - 1)
        bank = np.where(bi + t >= nb, 1.0,
                        1 - other[total[:, :, 0], np.arange(nb)[None], f, :])
        for i, (farkle, flat, starts, probs) in enumerate(plan):
          w = farkle * x_farkle
          if len(flat):     # some rolls score
            reached = V[np.minimum(t + flat[:, 0], rows), flat[:, 1]]
            best = np.maximum.reduceat(reached, starts, axis=0)
            w = w + np.tensordot(probs, best, 1)
          if t * step >= bank_min:
            w = np.maximum(w, bank)
          V[t, i] = np.where(t > t_max, 1.0, w)
      new[:, :, f, :] = V[0, full]
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0


def solve_players_hands(players: int, goal: int, hands: tuple,
                        rules: str = "kcd", tol: float = 1e-15,
                        max_iter: int = 500,
                        start: np.ndarray | None = None) -> np.ndarray:
  """`players` players of rules without a penalty ("minimal" or "kcd",
  bank minimum 50), each with a hand of `hands` (dice that differ, as
  `solve_hands` takes them), each maximizing their own win probability.

  Returns W0[s_0, .., s_{N-1}, h_0, .., h_{N-1}, i]: scores (points / 50)
  and hands in turn order from the player to move, seat i's probability.
  Every assignment of hands to seats is solved; a farkle or a bank passes
  the turn with the hands. Ties as `solve_players`: banking first, then
  the first option of a score set (in order of the dice left). `start`
  (W0's shape): where the iteration starts instead of 1/N everywhere.
  """
  step, N, H = 50, players, len(hands)
  nb = goal // step
  shape = (nb,) * N + (H,) * (N - 1)          # a key, less the mover's hand
  idx = np.meshgrid(*(np.arange(m) for m in shape), indexing="ij")
  s, h = idx[:N], idx[N:]
  t_max = nb - 1 - s[0]
  plans = [_hand_plans(rules, hand, step) for hand in hands]
  win = np.zeros(shape + (N,))
  win[..., 0] = 1.0
  w0 = (np.full((nb,) * N + (H,) * N + (N,), 1.0 / N) if start is None
        else start.copy())

  def passed(w0, total, f):
    """The mover's vector when the turn passes with the mover (hand f)
    at `total`: the next mover's, seats rotated back by one."""
    nxt = w0[tuple(s[1:]) + (np.minimum(total, nb - 1),) + tuple(h)
             + (np.full_like(total, f),)]
    return np.roll(nxt, 1, axis=-1)

  for _ in range(max_iter):
    new = np.empty_like(w0)
    for f, (plan, full) in enumerate(plans):
      farkle_vec = passed(w0, s[0], f)
      V = np.broadcast_to(win, (nb + 1, len(plan)) + win.shape).copy()
      for t in range(nb - 1, -1, -1):
        bank = np.where((s[0] + t >= nb)[..., None], win,
                        passed(w0, s[0] + t, f))
        for i, (farkle, flat, starts, probs) in enumerate(plan):
          w = farkle * farkle_vec
          if len(flat):   # some rolls score: each set's first best option
            reached = V[np.minimum(t + flat[:, 0], nb), flat[:, 1]]
            first = reached[..., 0]
            top = np.maximum.reduceat(first, starts, axis=0)
            owner = np.repeat(np.arange(len(starts)),
                              np.diff(np.append(starts, len(flat))))
            at = np.where(first == top[owner],
                          np.arange(len(flat)).reshape(
                              (-1,) + (1,) * (first.ndim - 1)), len(flat))
            pick = np.minimum.reduceat(at, starts, axis=0)
            best = np.take_along_axis(reached, pick[..., None], axis=0)
            w = w + np.tensordot(probs, best, 1)
          if t * step >= BANK_MIN[rules]:
            w = np.where((bank[..., 0] >= w[..., 0])[..., None], bank, w)
          V[t, i] = np.where((t > t_max)[..., None], win, w)
      new[(slice(None),) * N + (f,)] = V[0, full]
    change = np.abs(new - w0).max()
    w0 = new
    if change < tol:
      break
  return w0


def _hand_plans(rules: str, hand: tuple, step: int, wild: tuple = ()):
  """Per set of dice positions left: (P(farkle), options as (rows gained,
  plan index) [O, 2], each option set's first option [R], its
  probabilities [R]); and the index of the whole hand."""
  dists = _hands(rules, hand, wild)
  where = {m: i for i, m in enumerate(dists)}
  plans = []
  for farkle, sets in dists.values():
    flat = [(pts // step, where[rest]) for options in sets
            for rest, pts in options]
    starts = np.cumsum([0] + [len(o) for o in sets])[:-1]
    plans.append((float(farkle), np.array(flat), starts,
                  np.array([float(p) for p in sets.values()])))
  return plans, where[tuple(range(6))]


def expected_hand_turn(rules: str, hand: tuple, cap: int = 6000,
                       wild: tuple = ()) -> float:
  """The maximum mean points of one turn from the whole hand (every state
  past `cap` banks; the hand has no die that cannot farkle), by the direct
  recursion over dice left."""
  dists = _hands(rules, hand, wild)
  bank_min = BANK_MIN[rules]
  memo: dict = {}
  for t in range(cap, -1, -50):
    for left, (farkle, sets) in dists.items():
      roll = sum(float(p) * max(float(t + pts) if t + pts > cap
                                else memo[(t + pts, rest)]
                                for rest, pts in options)
                 for options, p in sets.items())
      memo[(t, left)] = max(roll, t) if t >= bank_min else roll
  return memo[(0, tuple(range(6)))]


def turn_bust(rules: str, goal: int, floor: int, w0: np.ndarray,
              key: tuple[int, int, int, int]) -> dict:
  """{(t, n): (bust, rolling)} of one key (b, d, f, e indices from the
  floor): the chance that the turn ends in a farkle from in-turn state
  (t points, n dice) under the optimal policy of `w0` (bust: 0 where the
  player banks, bank >= roll; rolling: when the player rolls on there),
  by a backward pass over the turn as `start_value`. The option a score
  set takes is its first of the highest value, in the order of the set;
  the states of several options of one value whose chances differ are
  listed under "ties". Under "points": {(t, n): {points banked: chance,
  "farkle": chance}} of the rest of the turn from there, played so (a
  total past the last one short of the goal banks at once)."""
  step, bank_min, nb, bi, di, ei, t_max, x_farkle = _key_turn(
      rules, goal, floor, w0, key)
  values, out, points = {}, {"ties": set()}, {}

  def at(t, n):   # (value, bust, points) of a state: a win banks at once
    if t > t_max:
      return 1.0, 0.0, {t: 1.0}
    return values[t, n], out[t, n][0], points[t, n]

  for t in range(t_max, -1, -step):
    for n in range(1, 7):
      farkle, sets = distribution(rules, n)
      roll, bust = float(farkle) * x_farkle, float(farkle)
      later = collections.Counter({"farkle": float(farkle)})
      for sset, p in sets.items():
        reached = [at(t + pts, 6 if k == n else n - k) for k, pts in sset]
        top = max(v for v, _, _ in reached)
        taken = [(b, d) for v, b, d in reached if v == top]
        if len({b for b, _ in taken}) > 1:
          out["ties"].add((t, n))
        roll += float(p) * top
        bust += float(p) * taken[0][0]
        for total, q in taken[0][1].items():
          later[total] += float(p) * q
      w, banks = roll, False
      if t >= bank_min:
        total = bi + t // step
        bank = 1.0 if total >= nb else 1 - w0[di, total, ei, 0]
        w, banks = max(roll, bank), bank >= roll
      values[t, n] = w
      out[t, n] = (0.0 if banks else bust, bust)
      points[t, n] = {t: 1.0} if banks else dict(later)
  out["points"] = points
  return out
