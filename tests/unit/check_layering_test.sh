#!/usr/bin/env bash
# tools/check_layering.sh on small trees: each rule it must enforce, and the includes it must
# let through. Usage: check_layering_test.sh CHECKER
set -uo pipefail
checker=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# tree NAME FILE=INCLUDE... : a tree with the public and private headers below, plus FILEs
# that each include INCLUDE.
tree() {
  local dir="$scratch/$1"
  shift
  mkdir -p "$dir"/framework/include/aclnn "$dir"/framework/src "$dir"/plugins/include/nnplug \
    "$dir"/backends/common "$dir"/tests/support "$dir"/ops/mse/include/aclnnop
  touch "$dir"/framework/include/aclnn/acl_meta.h "$dir"/framework/src/runtime_config.h \
    "$dir"/plugins/include/nnplug/plugin.h "$dir"/backends/common/reduction.h \
    "$dir"/tests/support/helper.h "$dir"/ops/mse/include/aclnnop/aclnn_mse_loss.h
  for entry in "$@"; do
    mkdir -p "$dir/$(dirname "${entry%%=*}")"
    printf '#include "%s"\n' "${entry#*=}" >>"$dir/${entry%%=*}"
  done
  echo "$dir"
}

expect() {  # expect pass|fail NAME FILE=INCLUDE...
  local want=$1 name=$2
  shift 2
  local dir output status
  dir=$(tree "$name" "$@")
  output=$("$checker" "$dir" 2>&1)
  status=$?
  if [[ $want == pass && $status -ne 0 ]] || [[ $want == fail && $status -eq 0 ]]; then
    echo "FAILED: $name: expected the check to $want, it exited $status: $output"
    failures=$((failures + 1))
  fi
}

expect fail backend_reads_framework backends/cpu_tbb/k.cpp=runtime_config.h
expect fail backend_reads_public_api backends/cpu_tbb/k.cpp=aclnn/acl_meta.h
expect fail example_reads_framework_internals examples/train/a.cpp=runtime_config.h
expect fail example_reads_the_sdk examples/a.cpp=nnplug/plugin.h
expect fail framework_reads_tests framework/src/a.cpp=helper.h
expect fail framework_reads_a_backend framework/src/a.cpp=reduction.h
expect fail sdk_reads_framework plugins/include/nnplug/x.h=aclnn/acl_meta.h
expect fail conformance_reads_framework_internals conformance/kit.cpp=runtime_config.h
expect fail python_reads_framework_internals python/module.cpp=runtime_config.h
expect pass backend_reads_sdk_and_common backends/cpu_tbb/k.cpp=nnplug/plugin.h backends/cpu_tbb/j.cpp=reduction.h
expect pass example_reads_public_api examples/a.cpp=aclnn/acl_meta.h examples/b.cpp=aclnnop/aclnn_mse_loss.h
expect pass ops_read_framework ops/mse/mse_ops.cpp=runtime_config.h
expect pass tests_read_anything tests/unit/t.cpp=runtime_config.h tests/unit/u.cpp=reduction.h
expect pass system_headers_are_not_checked backends/cpu_tbb/k.cpp=vector

[[ $failures -eq 0 ]] && echo "check_layering: every case as expected"
exit $((failures > 0))
