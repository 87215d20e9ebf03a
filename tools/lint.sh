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
unformatted=()
for file in "${sources[@]}"; do
  clang-format-14 --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
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
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# clang-tidy prints "N warnings generated." for the suppressed ones; only findings matter.
# The Python module is compiled with GCC's -fno-fat-lto-objects (pybind11), which clang
# does not know: that flag is not a finding.
if ! printf '%s\0' "${units[@]}" |
  xargs -0 -n 4 -P "$(nproc)" clang-tidy-14 -p "$BUILD_DIR" --quiet \
    --extra-arg=-Wno-ignored-optimization-argument >"$log" 2>&1; then
  status=1
fi
findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" || true)
if [ "$status" -ne 0 ] || [ "$findings" -gt 0 ]; then
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|warnings? treated as errors' "$log" || true
  echo "clang-tidy: $findings finding(s) in ${#units[@]} translation units"
  status=1
else
  echo "clang-tidy: no findings in ${#units[@]} translation units"
fi
exit "$status"
