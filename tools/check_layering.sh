#!/usr/bin/env bash
# Checks the dependency rules between folders (CONTRIBUTING.md, "What may include what") by
# reading every #include of the C/C++ sources under ROOT (default: the repository) and
# resolving it to the project's header it names. Prints each include that breaks a rule and
# exits 1 if there is one. Includes of headers outside the project (system, libraries) are
# not checked.
#   tools/check_layering.sh [ROOT]
set -euo pipefail
root=${1:-"$(dirname "${BASH_SOURCE[0]}")/.."}
cd "$root"

# module: what its files may include besides the module itself. The module of a file is the
# longest module path that starts it; "*" matches one folder name. Folders without a rule
# (tests/, tools/) may include anything; nothing outside tests/ may include tests/.
RULES='
plugins/include    |
plugins/examples   | plugins/include
backends/*         | backends/common plugins/include
framework          | plugins/include
ops/*              | framework plugins/include
conformance        | framework/include ops/*/include ops/*/reference plugins/include
cli                | framework/include conformance plugins/include
examples           | framework/include ops/*/include
bench              | framework/include ops/*/include plugins/include backends/common examples/train
python             | framework/include ops/*/include
'

find . -path ./build -prune -o -path './build-*' -prune -o -path './.git' -prune -o \
  -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.c' -o -name '*.cc' -o -name '*.cpp' \) -print |
  sed 's|^\./||' | sort >"${TMPDIR:-/tmp}/nnplug_layering_files.$$"
trap 'rm -f "${TMPDIR:-/tmp}/nnplug_layering_files.$$"' EXIT

files="${TMPDIR:-/tmp}/nnplug_layering_files.$$"
# file <TAB> included name, for every include line of every source.
while IFS= read -r file; do
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$file" |
    while IFS= read -r name; do printf '%s\t%s\n' "$file" "$name"; done
done <"$files" |
awk -v rules="$RULES" -v files="$files" '
# The module a path belongs to ("backends/cpu_tbb"); its rule key ("backends/*") is left in
# rule_key.
function module_of(path,   best, m, pat, re) {
  best = ""; rule_key = ""
  for (m in allowed) {
    pat = m; gsub(/\*/, "[^/]+", pat); re = "^" pat "(/|$)"
    if (match(path, re) && RLENGTH > length(best)) { best = substr(path, 1, RLENGTH); rule_key = m }
  }
  sub(/\/$/, "", best)
  return best
}
function under(path, prefix,   pat) {
  pat = prefix; gsub(/\*/, "[^/]+", pat)
  return path ~ ("^" pat "(/|$)")
}
function may_include(file, header,   mod, n, i, list) {
  # The tests of an op folder (ops/<op>/tests/) are tests; its kit entry
  # (ops/<op>/<op>_kit.cpp) is compiled into the conformance kit and may use its catalog.
  if (file ~ /^ops\/[^\/]+\/tests\//) return 1
  if (file ~ /^ops\/[^\/]+\/[^\/]+_kit\.cpp$/ && under(header, "conformance")) return 1
  if (header ~ /^tests\// && file !~ /^tests\//) return 0
  mod = module_of(file)
  if (mod == "" || under(header, mod)) return 1
  n = split(allowed[rule_key], list, " ")
  for (i = 1; i <= n; i++) if (under(header, list[i])) return 1
  return 0
}
BEGIN {
  n = split(rules, lines, "\n")
  for (i = 1; i <= n; i++) {
    if (lines[i] !~ /\|/) continue
    split(lines[i], parts, "|")
    key = parts[1]; gsub(/[[:space:]]/, "", key)
    value = parts[2]; gsub(/^[[:space:]]+|[[:space:]]+$/, "", value)
    allowed[key] = value
  }
  while ((getline path < files) > 0) if (path ~ /\.(h|hpp)$/) headers[path] = 1
  bad = 0
}
{
  file = $1; name = $2; dir = file; sub(/\/[^\/]*$/, "", dir)
  # The headers the name can mean: one beside the including file wins, as the compiler has it.
  if ((dir "/" name) in headers) { if (!may_include(file, dir "/" name)) report(file, name, dir "/" name); next }
  found = 0; ok = 0; which = ""
  for (h in headers) {
    if (h == name || substr(h, length(h) - length(name)) == "/" name) {
      found = 1; which = h
      if (may_include(file, h)) ok = 1
    }
  }
  if (found && !ok) report(file, name, which)
}
function report(file, name, header) {
  printf "%s includes %s (%s): %s may not depend on %s\n", file, name, header, \
    (module_of(file) == "" ? "this folder" : module_of(file)), header
  bad = 1
}
END { exit bad }
'
