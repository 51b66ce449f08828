#!/usr/bin/env bash
# The GPU measurements of BENCHMARKS.md in one command, for a CUDA machine
# that has JAX but may lack a package index (wheels of what is missing in
# .wheels/ beside the checkout: ml_collections; for the tests part also
# Starlette, uvicorn, pexpect and their pure-Python dependencies, which an
# H200 machine of 2026-11-27 lacked):
#
#   bash experiments/gpu_measure.sh OUTDIR [PART ...]
#
# PART is any of: device default facebook counts players passcost seats
# seats_wave seats_2000 notebook tuning ncu tests (all but the last eight
# by default).
# Each part runs under its own timeout (default 240 s, facebook 2 x 330,
# counts 230, players 200, passcost 120, seats 2 x 150, seats_2000 300,
# notebook 200, tuning 510 in all, tests 400); `facebook` solves the
# published model twice, with an empty compile cache and then with the
# cache it left. On one H200 (2026-11-27) they took 31, 12.5 + 10.2, 19,
# 6.6, 10, 15.7 + 45.2, 121 and 25 s (311 s with seats, seats_2000 and
# notebook), the tests 4 min (2026-11-26: the tuning part 2 min 30 s):
# where a command may run 10 min, run the default parts, then "tuning",
# then "tests". `seats_2000` solves three players on Facebook rules to
# 2,000; `notebook` runs experiments/colab.ipynb through nbclient
# (experiments/notebook_run.py), whose wheels go in .wheels/notebook/.
# `counts` records what a facebook sweep moves as the GPU backend compiles
# it (XLA's bytes accessed of its fusions); `tuning` times the wavefront's
# chunk row cut several ways on default and facebook and traces a sweep of
# each kernel (experiments/kernel_tuning.py); `tests` runs the suite with
# JAX on the GPU, each test's result in tests.log (a run cut by its timeout
# still names what passed and failed); logs, JSON and summaries land
# in OUTDIR (emptied of an earlier run's wall times) and a short table is
# printed last. Where only a few files come back from the machine, give a
# scratch OUTDIR and pack it: `bash experiments/gpu_measure.sh /tmp/gm;
# tar czf "$OUT/gm.tgz" -C /tmp gm`.
set -u
out=${1:?usage: gpu_measure.sh OUTDIR [PART ...]}
shift
parts=${*:-device default facebook counts players passcost}
mkdir -p "$out"
: >"$out/walls.txt"
export PYTHONUNBUFFERED=1
# experiments/*.py import the package from the source tree.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# The real peak, not the 75% JAX would reserve up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
if ls .wheels/*.whl >/dev/null 2>&1; then
  python3 -m pip install --no-index --no-deps -q .wheels/*.whl
fi

timed() {  # timed NAME SECONDS CMD...: runs CMD, logs to OUT/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s%N)
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%-10s rc=%-3s wall %6d.%03d s\n' "$name" "$rc" \
    $((ms / 1000)) $((ms % 1000)) | tee -a "$out/walls.txt"
}

three() {  # three NAME SECONDS [FLAG ...]: three players, tiny:facebook
  local name=$1 limit=$2
  shift 2
  rm -rf "/tmp/gpu_$name"
  timed "$name" "$limit" python3 -m farkle_jax.main \
    --config configs/tiny.py:facebook --config.rules.players=3 "$@" \
    --workdir "/tmp/gpu_$name" --progress=log --verbose
  cp "/tmp/gpu_$name/summary.json" "$out/${name}_summary.json" 2>/dev/null
}

for part in $parts; do
  case $part in
    device)
      { date -u +%FT%TZ
        nvidia-smi --query-gpu=name,memory.total,driver_version \
          --format=csv,noheader
        python3 -c "import jax; print('jax', jax.__version__, jax.devices())"
        nproc
        # What a process pays before any solve: JAX with its CUDA backend
        # started, then the package's imports (a warm facebook command
        # spent about 1.9 s before its first log line and after its last).
        python3 -c "import time; t = time.time(); import jax
jax.devices(); print(f'start: import jax and its devices {time.time() - t:.2f} s')
t = time.time(); import farkle_jax.main
print(f'start: import farkle_jax.main {time.time() - t:.2f} s')"
      } >"$out/device.txt" 2>&1 ;;
    default)
      timed default 240 python3 experiments/benchmark.py \
        --config configs/default.py \
        --methods=wavefront-pallas,wavefront-xla,ordered,value_iteration \
        --json "$out/default.json" ;;
    facebook)
      # Cold (an empty compile cache), then warm (a second process).
      rm -rf /tmp/gpu_fb /tmp/gpu_fb2 /tmp/gpu_xla_cache
      timed facebook 330 python3 -m farkle_jax.main \
        --config configs/facebook.py --workdir /tmp/gpu_fb --progress=log --verbose \
        --config.compile_cache=/tmp/gpu_xla_cache
      cp /tmp/gpu_fb/summary.json "$out/facebook_summary.json" 2>/dev/null
      timed facebook_warm 330 python3 -m farkle_jax.main \
        --config configs/facebook.py --workdir /tmp/gpu_fb2 --progress=log --verbose \
        --config.compile_cache=/tmp/gpu_xla_cache
      cp /tmp/gpu_fb2/summary.json "$out/facebook_warm_summary.json" \
        2>/dev/null ;;
    counts)
      timed counts 230 python3 experiments/benchmark.py \
        --config configs/facebook.py --counts_only --sweeps=19 \
        --methods=wavefront-pallas,wavefront-xla,ordered-accelerator \
        --json "$out/counts.json" ;;
    players)
      rm -rf /tmp/gpu_p3
      timed players 200 python3 -m farkle_jax.main \
        --config configs/minimal.py --config.rules.players=3 \
        --config.rules.goal=2000 --workdir /tmp/gpu_p3 --progress=log --verbose
      cp /tmp/gpu_p3/summary.json "$out/players_summary.json" 2>/dev/null ;;
    seats)
      # Three players on Facebook rules with the Newton step: the tiny game
      # to 1,000 (README's table), then to 1,500 (floor -750).
      three seats 150
      three seats_1500 150 --config.rules.goal=1500 \
        --config.rules.floor=-750 ;;
    seats_wave)
      # The tiny three-player game as a wavefront (solver/seat_wavefront.py:
      # 287 dependent steps a sweep against the stage engine's 9,522), with
      # its fused kernel (auto picks it on a GPU: seat_wave_kernel.py), then
      # with XLA's step: its sweeps alternate, and it stops after 10 in one
      # line (rc 1; on an H200, 2026-11-27: 0.08 s a sweep, 0.25 with XLA's
      # step). Then one whose sweeps converge, three players on the minimal
      # rules to 1,000, each way.
      three seats_wave 300 --config.solver.method=wavefront
      three seats_wave_xla 300 --config.solver.method=wavefront \
        --config.solver.kernel=xla
      for kernel in pallas xla; do
        rm -rf "/tmp/gpu_seats_min_$kernel"
        timed "seats_min_$kernel" 200 python3 -m farkle_jax.main \
          --config configs/minimal.py --config.rules.players=3 \
          --config.rules.goal=1000 --config.solver.method=wavefront \
          --config.solver.kernel=$kernel --progress=log --verbose \
          --workdir "/tmp/gpu_seats_min_$kernel"
      done ;;
    seats_2000)
      # The README's three-player game at scale: Facebook rules to 2,000.
      three seats_2000 300 --config.rules.goal=2000 \
        --config.rules.floor=-1000 ;;
    notebook)
      # experiments/colab.ipynb on the published model, then resumed.
      if ls .wheels/notebook/*.whl >/dev/null 2>&1; then
        python3 -m pip install --no-index -q --find-links .wheels/notebook \
          nbclient nbformat ipykernel
      fi
      rm -rf /tmp/gpu_nb
      timed notebook 200 python3 experiments/notebook_run.py \
        --config configs/facebook.py --workdir /tmp/gpu_nb ;;
    passcost)
      timed passcost 120 python3 experiments/pass_cost.py \
        --keys 1024 --rows 100 --repeats 3 ;;
    tuning)
      default_variants=xla:4,pallas:2:128:1:4:1,pallas:1:128:1:4:1
      default_variants=$default_variants,pallas:1:64:1:2:1
      timed tuning_default 120 python3 experiments/kernel_tuning.py \
        --config configs/default.py --json "$out/tuning_default.json" \
        --variants="$default_variants"
      timed tuning 330 python3 experiments/kernel_tuning.py \
        --config configs/facebook.py --json "$out/tuning.json"
      timed profile 60 python3 experiments/kernel_tuning.py \
        --config configs/facebook.py --sweeps=1 \
        --variants=xla:4,pallas:2:128:1:4:1 --profile /tmp/gpu_profile ;;
    ncu)
      # Where a fused-kernel launch's time goes (Nsight Compute, one
      # launch of a facebook sweep). Run with its default clock control,
      # kernel replay ended in a segmentation fault of the profiled
      # process on an H200 (2026-11-27); the clocks are left as found.
      # Loops from the host, so the launch is a plain kernel.
      for mode in ${NCU_MODES:-kernel}; do
        XLA_FLAGS=--xla_gpu_enable_command_buffer= timed "ncu_$mode" 150 \
          ncu --clock-control none --replay-mode "$mode" \
          -k regex:wave_chunk_row \
          --launch-skip 300 --launch-count 1 --section SpeedOfLight \
          --section Occupancy --section WarpStateStats \
          --section SchedulerStats --section MemoryWorkloadAnalysis \
          --section LaunchStats python3 experiments/kernel_tuning.py \
          --config configs/facebook.py --sweeps=1 \
          --variants=pallas:2:128:1:4:1
      done ;;
    tests)
      JAX_PLATFORMS=cuda timed tests 400 python3 -m pytest -q -n 10 -v \
        -p no:cacheprovider --ignore=tests/test_notebook.py -rfE ;;
    *) echo "unknown part $part (device default facebook counts players" \
         "passcost seats seats_wave seats_2000 notebook tuning ncu tests)"
       exit 2 ;;
  esac
done

echo "== summary"
cat "$out/device.txt" 2>/dev/null
cat "$out/walls.txt" 2>/dev/null
grep -h -A5 '^method' "$out/default.log" 2>/dev/null
grep -h 'first-player\|sweep\|seat' "$out/facebook.log" 2>/dev/null | tail -6
grep -h 'seconds: starting' "$out/facebook.log" "$out/facebook_warm.log" \
  2>/dev/null | sed 's/^I[0-9.: ]* [0-9]* //' 
grep -h -A3 '^method' "$out/counts.log" 2>/dev/null
grep -h '^== run\|first-player\|backend' "$out/notebook.log" 2>/dev/null
tail -n 6 "$out/players.log" 2>/dev/null
tail -n 6 "$out/passcost.log" 2>/dev/null
for f in seats seats_1500 seats_2000 seats_wave seats_wave_xla seats_min_pallas \
    seats_min_xla; do
  grep -h 'seat [0-9]:\|converged\|its stages in\|Newton step:' \
    "$out/$f.log" 2>/dev/null | sed 's/^I[0-9.: ]* [0-9]* //'
done
sed -n '/^variant/,$p' "$out/tuning_default.log" "$out/tuning.log" \
  2>/dev/null | grep -v '^[IWE][0-9]' 
grep -h '^# .*trace /device\|^#  ' "$out/profile.log" 2>/dev/null | head -30
grep -h 'Duration\|Throughput\|Occupancy\|Registers Per\|Block Limit' \
  "$out"/ncu_*.log 2>/dev/null | head -24
grep -h 'FAILED\|ERROR\|passed\|failed' "$out/tests.log" 2>/dev/null \
  | tail -30
