#!/usr/bin/env python3
"""Which translation units clang-tidy must check again, for tools/lint.sh.

A unit clang-tidy found clean once is clean again while nothing it reads has changed: its
compile commands, every file it includes (as clang itself resolves them: clang-scan-deps),
the .clang-tidy files, clang-tidy's version and its arguments. This script hashes all of
that into one key per unit and prints "KEY<TAB>FILE" for each unit whose key has no entry
in CACHE_DIR; lint.sh runs clang-tidy on those and records the key of each that comes out
clean. Paths inside the repository are hashed relative to it, so two clones share entries.

    tools/clang_tidy_cache.py BUILD_DIR CACHE_DIR TIDY_ARGUMENTS FILE...
"""
import hashlib
import json
import os
import subprocess
import sys


def make_rules(text):
    """Maps each source file to the files it reads, from clang-scan-deps' make output."""
    reads = {}
    for rule in text.replace("\\\n", " ").splitlines():
        if ":" not in rule:
            continue
        files = rule.split(":", 1)[1].split()
        if files:
            reads.setdefault(os.path.realpath(files[0]), set()).update(files)
    return reads


def main():
    build_dir, cache_dir, tidy_arguments, *units = sys.argv[1:]
    root = os.path.realpath(os.getcwd())
    database = os.path.join(build_dir, "compile_commands.json")
    scan = subprocess.run(["clang-scan-deps-14", "-compilation-database", database,
                           "-j", str(os.cpu_count() or 1)], capture_output=True, text=True)
    reads = make_rules(scan.stdout)  # a unit it could not scan is missing, so checked
    commands = {}
    with open(database) as stream:
        for entry in json.load(stream):
            commands.setdefault(os.path.realpath(entry["file"]), []).append(
                entry["command"] + " @ " + entry["directory"])

    def relative(text):
        return text.replace(root + "/", "<root>/").replace(root, "<root>")

    digests = {}

    def digest(path):
        if path not in digests:
            with open(path, "rb") as stream:
                digests[path] = hashlib.sha256(stream.read()).hexdigest()
        return digests[path]

    tidy_files = subprocess.run(["git", "ls-files", ".clang-tidy", "*/.clang-tidy"],
                                capture_output=True, text=True, check=True).stdout.split()
    version = subprocess.run(["clang-tidy-14", "--version"], capture_output=True,
                             text=True, check=True).stdout
    common = [version, tidy_arguments] + [f + " " + digest(f) for f in sorted(tidy_files)]
    for unit in units:
        path = os.path.realpath(unit)
        if path not in reads:  # not scanned: no key, so it is checked
            print("-\t" + unit)
            continue
        key = hashlib.sha256()
        for line in common + [relative(c) for c in sorted(commands.get(path, []))]:
            key.update(line.encode() + b"\n")
        for read in sorted(os.path.realpath(f) for f in reads[path]):
            key.update((relative(read) + " " + digest(read) + "\n").encode())
        key = key.hexdigest()
        if not os.path.exists(os.path.join(cache_dir, key)):
            print(key + "\t" + unit)


if __name__ == "__main__":
    main()
