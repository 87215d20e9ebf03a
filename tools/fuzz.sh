#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang-14 in build-fuzz/ (CMake option
# NNPLUG_FUZZ: everything, libnnplug and the backend plugins included, with AddressSanitizer
# and UBSan) and runs each for SECONDS (default 60), one per core at a time, on a scratch
# copy of its seed corpus
# (tests/fuzz/corpus/<target>/ is never written). Fails on any crash, sanitizer report,
# leak, timeout or broken contract; the input that caused it is kept in
# build-fuzz/artifacts/<target>/ and the target's log beside it.
#   tools/fuzz.sh [SECONDS]
# NNPLUG_FUZZ_BUILD_DIR overrides the build folder. NNPLUG_BACKEND (cpu_tbb or atlas_emu)
# runs every input of fuzz_ops and fuzz_class_targets on that backend instead of the one
# their first byte picks.
# Reproduce a failure: build-fuzz/bin/<target> build-fuzz/artifacts/<target>/crash-...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SECONDS_PER_TARGET=${1:-60}
if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -eq 0 ]; then
  echo "usage: tools/fuzz.sh [SECONDS]   (seconds per fuzz target, default 60)" >&2
  exit 2
fi
BUILD_DIR=${NNPLUG_FUZZ_BUILD_DIR:-build-fuzz}
TARGETS=(fuzz_runtime_config fuzz_ops fuzz_class_targets fuzz_checkpoint fuzz_safe_file fuzz_plugin_table fuzz_cli fuzz_trace fuzz_csv)
PACKAGES=(
  clang-14 libclang-rt-14-dev cmake ninja-build pkg-config nlohmann-json3-dev
  libboost-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libtbb-dev libhwy-dev libeigen3-dev libcli11-dev
)

. tools/debian_packages.sh
. tools/compiler_cache.sh

install_missing_packages "${PACKAGES[@]}"
use_compiler_cache
# Only the library, the plugins and the fuzz targets: no tests, examples, benchmarks or
# Python package. A Debug build (-O0): clang-14 spends over 40 minutes optimizing the
# instrumented Highway kernels (backends/cpu_tbb/*_simd.cpp) at -O2, while the whole build
# takes about a minute of two cores at -O0.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DNNPLUG_FUZZ=ON \
  -DNNPLUG_BUILD_TESTS=OFF -DNNPLUG_BUILD_EXAMPLES=OFF -DNNPLUG_BUILD_BENCHMARKS=OFF \
  -DNNPLUG_BUILD_PYTHON=OFF "${COMPILER_CACHE_ARGS[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)" --target nnplug_fuzz

scratch=$(mktemp -d "${TMPDIR:-/tmp}/nnplug-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# A 64 MiB quarantine of freed memory (ASan's default is 256) keeps a run within a few
# hundred MB; -rss_limit_mb fails a target that grows past 2 GB.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=64:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan_suppressions.txt:print_suppressions=0}
# One target: its summary goes to $scratch/<target>.summary, its verdict to .failed.
fuzz_target() {
  local target=$1 corpus=$scratch/$1 artifacts=$BUILD_DIR/artifacts/$1 log=$BUILD_DIR/artifacts/$1.log
  local summary=$scratch/$1.summary status=0
  rm -rf "$artifacts"  # only this run's findings
  mkdir -p "$corpus" "$artifacts"
  cp tests/fuzz/corpus/"$target"/* "$corpus"/
  local options=(-max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2048 -max_len=16384
                 -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ -f tests/fuzz/"$target".dict ] && options+=(-dict=tests/fuzz/"$target".dict)
  echo "== $target: ${SECONDS_PER_TARGET} s from $(ls "$corpus" | wc -l) seeds" >"$summary"
  # libFuzzer stops itself after its time; this bounds a target that hangs past it (in a
  # sanitizer's exit-time report, say), so that a stuck run fails instead of stalling CI.
  timeout --kill-after=30 $((SECONDS_PER_TARGET + 300)) \
    "$BUILD_DIR/bin/$target" "${options[@]}" "$corpus" >"$log" 2>&1 || status=$?
  [ "$status" -eq 124 ] && echo "killed: still running 300 s past its time" >>"$log"
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" | sed 's/^/   /' >>"$summary" || true
  echo "   corpus grew from $(ls tests/fuzz/corpus/"$target" | wc -l) to $(ls "$corpus" | wc -l) inputs" >>"$summary"
  if [ "$status" -ne 0 ] || grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|contract broken" "$log"; then
    echo "   FAILED (exit $status); log: $log" >>"$summary"
    grep -E "ERROR:|runtime error:|contract broken|SUMMARY:|Test unit written|^killed:" "$log" | head -20 | sed 's/^/   /' >>"$summary"
    touch "$scratch/$target.failed"
  fi
}

# The targets run side by side, one per core, each for its full time.
for target in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_target "$target" &
done
wait
failed=()
for target in "${TARGETS[@]}"; do
  cat "$scratch/$target.summary"
  [ -e "$scratch/$target.failed" ] && failed+=("$target")
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing passed: ${TARGETS[*]}, ${SECONDS_PER_TARGET} s each"
