#!/usr/bin/env bash
# The style gate, run by `tools/dev.sh lint` and CI: every C/C++ file of the repository laid
# out as .clang-format says, and no clang-tidy finding (.clang-tidy) in any translation unit
# of the build. Prints each offending file or finding and exits 1 when there is one.
#   tools/lint.sh [BUILD_DIR]    (default build; needs BUILD_DIR/compile_commands.json)
# Fix the layout with `clang-format-14 -i FILE`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${1:-build}
status=0

mapfile -t sources < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp')
# One clang-format-14 run over all files; each file it would change, it names in an error
# ("FILE:LINE:COLUMN: error: code should be clang-formatted").
format_status=0
format_log=$(clang-format-14 --dry-run --Werror "${sources[@]}" 2>&1) || format_status=$?
mapfile -t unformatted < <(sed -nE 's/^(.+):[0-9]+:[0-9]+: error: .*/\1/p' <<<"$format_log" | sort -u)
if [ "$format_status" -ne 0 ] && [ ${#unformatted[@]} -eq 0 ]; then
  echo "clang-format-14 failed (exit $format_status) naming no file:" >&2
  echo "$format_log" >&2
  exit 2
fi
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "clang-format-14 would change ${#unformatted[@]} file(s):"
  printf '  %s\n' "${unformatted[@]}"
  status=1
else
  echo "clang-format: ${#sources[@]} files laid out as .clang-format says"
fi

# The repository's translation units that the build compiles (headers are checked through
# them, as .clang-tidy's HeaderFilterRegex says).
if [ ! -f "$BUILD_DIR/compile_commands.json" ]; then
  echo "no $BUILD_DIR/compile_commands.json: configure the build first (tools/dev.sh lint does)" >&2
  exit 2
fi
units=()
for file in "${sources[@]}"; do
  case "$file" in *.c | *.cc | *.cpp) ;; *) continue ;; esac
  grep -qF "\"file\": \"$PWD/$file\"" "$BUILD_DIR/compile_commands.json" && units+=("$file")
done
# A unit found clean before is not checked again while nothing it reads has changed
# (tools/clang_tidy_cache.py says which); NNPLUG_TIDY_CACHE=0 checks every unit.
tidy_arguments=--extra-arg=-Wno-ignored-optimization-argument
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nnplug/clang-tidy
mkdir -p "$cache"
if [ "${NNPLUG_TIDY_CACHE:-1}" = 0 ]; then
  stale_units=$(printf -- '-\t%s\n' "${units[@]}")
else  # set -e: if the script fails, so does the lint
  stale_units=$(tools/clang_tidy_cache.py "$BUILD_DIR" "$cache" "$tidy_arguments" "${units[@]}")
fi
stale=()
[ -z "$stale_units" ] || mapfile -t stale <<<"$stale_units"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# One unit per clang-tidy run: its log tells whether that unit is clean, and a clean unit's
# key goes into the cache. clang-tidy prints "N warnings generated." for the suppressed
# ones; only findings matter. The Python module is compiled with GCC's -fno-fat-lto-objects
# (pybind11), which clang does not know: that flag is not a finding.
check_unit() {
  local key=${1%%$'\t'*} unit=${1#*$'\t'} log
  log=$(mktemp "$logs/unit.XXXXXX")
  if clang-tidy-14 -p "$BUILD_DIR" --quiet "$tidy_arguments" "$unit" >"$log" 2>&1 &&
    ! grep -qE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log"; then
    [ "$key" = - ] || touch "$cache/$key"
  else
    echo "failed: $unit" >>"$log"
  fi
}
export -f check_unit
export BUILD_DIR cache logs tidy_arguments
[ ${#stale[@]} -eq 0 ] || printf '%s\0' "${stale[@]}" | xargs -0 -n 1 -P "$(nproc)" bash -c 'check_unit "$1"' _
cat "$logs"/unit.* >"$logs/all" 2>/dev/null || true
findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$logs/all" || true)
if grep -q '^failed: ' "$logs/all"; then
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|warnings? treated as errors' "$logs/all" || true
  echo "clang-tidy: $findings finding(s) in ${#units[@]} translation units"
  status=1
else
  echo "clang-tidy: no findings in ${#units[@]} translation units ($((${#units[@]} - ${#stale[@]})) unchanged since found clean)"
fi
exit "$status"
