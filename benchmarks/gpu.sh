#!/usr/bin/env bash
# The device checks of procgen_nb on one CUDA GPU, as one prepared script (under 8 minutes):
#   1. the CUDA tests: tests/test_cuda.py and every tests/track_gen test parametrized over
#      devices (the `device` fixture adds cuda:0 when Warp sees one), slow ones left out;
#   2. benchmarks/gpu_checks.py on cuda:0: CUDA-graph capture and replay of every generator
#      and of a graph with live counts (each replay equal to a fresh cook), guards read
#      deferred, and the throughput of every generator at E=65,536, N=256, as one table.
# Usage: bash benchmarks/gpu.sh [--smoke] [output folder]   (default: $OUT, else ./gpu_out)
#   --smoke: the same plumbing on the CPU at a small size (no CUDA tests): what the test
#   suite runs (tests/test_gpu_script.py) on a machine without a GPU.
# Every step's output is kept in the folder; the script stops at nothing (each step's exit
# status is printed at the end; the script exits 1 if one failed), so one run gives every
# number. Each step has a timeout; together they stay under 8 minutes.
set -u
cd "$(dirname "$0")/.."
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
out="${1:-${OUT:-gpu_out}}"
mkdir -p "$out"
if [ -z "${VIRTUAL_ENV:-}" ]; then
  for venv in /work/venv .venv; do
    [ -f "$venv/bin/activate" ] && { source "$venv/bin/activate"; break; }
  done
fi
export PROCGEN_NB_PROGRESS=0
status=()
failed=0

step() {  # step NAME SECONDS CMD...: runs CMD (timeout), keeps its output in $out/NAME.txt
  local name="$1" limit="$2"; shift 2
  echo "== $name (at most ${limit} s): $*"
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.txt"
  local rc=${PIPESTATUS[0]}
  status+=("$name=$rc")
  [ "$rc" = 0 ] || failed=1
}

t0=$(date +%s)
step devices 20 python -c "import warp as wp; wp.config.quiet = True; wp.init(); print([str(d) for d in wp.get_devices()])"
if [ "$smoke" = 1 ]; then
  echo "== cuda_tests: skipped (--smoke: no GPU)"
  step checks 300 python benchmarks/gpu_checks.py --smoke
else
  step cuda_tests 180 python -m pytest -q -p no:cacheprovider -p no:randomly --no-header \
    tests/test_cuda.py tests/track_gen -k cuda -m "not slow"
  step checks 240 python benchmarks/gpu_checks.py --device cuda --envs 65536 --points 256 \
    --repeats 10
fi

echo "== exit status per step: ${status[*]} ($(( $(date +%s) - t0 )) s)"
echo "== the table:"
sed -n '/^device /,$p' "$out/checks.txt"
exit "$failed"
