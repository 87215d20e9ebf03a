#!/usr/bin/env bash
# Runs a test program under valgrind: run_under_valgrind.sh <valgrind> <its options...> <program> <args...>
# Valgrind decodes every instruction itself and refuses those its host's CPUID does not
# list, even where the CPU runs them (seen: rdtscp, which libhwy's start-up timer calls, on
# a VM that hides the flag). Then no program that loads libhwy can run under it, so the test
# is skipped (exit 77, CTest's SKIP_RETURN_CODE) with the reason rather than failed; the
# native and sanitizer runs still cover the code. Any other outcome is the test's own.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/nnplug-valgrind.XXXXXX")
trap 'rm -f "$log"' EXIT
# valgrind's report (stderr) goes out as it comes, so a test stopped by CTest's timeout
# still shows it; stdout passes by on fd 3.
{ "$@" 2>&1 >&3 3>&- | tee "$log" >&2; } 3>&1
status=${PIPESTATUS[0]}
if [ "$status" -eq $((128 + 4)) ] && grep -q "Illegal opcode" "$log"; then
  where=$(grep -m1 -A1 "Illegal opcode" "$log" | tail -n1 | sed 's/^==[0-9]*==[[:space:]]*//')
  echo "SKIPPED: valgrind cannot run an instruction this CPU runs natively (${where})" >&2
  exit 77
fi
exit "$status"
