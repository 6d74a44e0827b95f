#!/usr/bin/env bash
# The device checks of track_gen on a machine with a CUDA GPU, as one prepared script:
#   1. the CUDA tests: tests/test_cuda.py and every tests/track_gen test parametrized over
#      devices (the `device` fixture adds cuda:0 when Warp sees one), quick ones only;
#   2. compare_generators.py on CUDA at E=65,536, N=256 (pipeline only: tracks/s, valid
#      fraction, readbacks per call), then the same at E=1,024 for comparison;
#   3. the crossing test (ops.is_simple) stays a CPU benchmark: benchmarks/crossings.py.
# Usage: bash benchmarks/gpu.sh [output folder]   (default: $OUT, else ./gpu_out)
# Every step's output is kept in the folder; the script stops at nothing (each step's exit
# status is printed at the end), so one run gives every number.
set -u
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu_out}}"
mkdir -p "$out"
[ -f /work/venv/bin/activate ] && source /work/venv/bin/activate
status=()

step() {  # step NAME CMD...: runs CMD, keeps its output in $out/NAME.txt, notes its status
  local name="$1"; shift
  echo "== $name: $*"
  "$@" 2>&1 | grep -v "building Warp kernels" | tee "$out/$name.txt"
  status+=("$name=${PIPESTATUS[0]}")
}

step devices python -c "import warp as wp; wp.init(); print([str(d) for d in wp.get_devices()])"
step cuda_tests timeout 900 python -m pytest -q -x -p no:cacheprovider tests/test_cuda.py \
  tests/track_gen -k "cuda"
step generators_e65536 timeout 600 python benchmarks/compare_generators.py --device cuda --envs 65536 \
  --points 256 --repeats 10 --no-reference
step generators_e1024 timeout 300 python benchmarks/compare_generators.py --device cuda --envs 1024 \
  --points 256 --repeats 10 --no-reference

echo "== exit status per step: ${status[*]}"
grep -h "tracks/s\|^[a-z]* *[0-9]" "$out"/generators_e*.txt || true
