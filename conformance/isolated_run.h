// Runs part of the kit in a child process under a watchdog, so that the plugin it judges
// cannot hang, crash or end the kit: the child's death, exit or silence becomes a failure
// of the case it was running, and the kit goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace nnplug::conformance {

// How much of a child's output the kit keeps (the rest is counted and dropped as it comes).
inline constexpr size_t kOutputKept = size_t{256} * 1024;

// How a child ended, with what it left: the records it wrote (Report lines, one per line)
// and everything it printed to stdout and stderr (the plugin's own output).
struct ChildOutcome {
    enum class End { kFinished, kCrashed, kExited, kHung, kNotStarted };
    End end = End::kNotStarted;
    int code = 0;  // kFinished, kExited: the exit status; kCrashed: the signal
    std::string records;
    std::string output;         // the first kOutputKept bytes of it
    uint64_t output_bytes = 0;  // how much the child printed in all
    // The case running when the child ended (running() in kit_internal.h); empty before the first.
    std::string group, op, name;
    std::string error;  // kNotStarted: why
    // How many processes the child left running (started by the plugin, in the child's
    // process group or handed to the kit as its orphans); each was killed.
    int leftovers = 0;
};

// Forks; the child runs body(records_fd) in a process group of its own, with stdin
// /dev/null and stdout and stderr into a pipe the parent empties as it waits, writes a mark of completion
// after it returns and exits with its result. The parent waits and stops the child (SIGKILL) when no new case
// has started for case_timeout seconds; then it kills whatever the child left running (its group, and the
// orphans the parent, a child subreaper, inherits from it). The child is killed when the parent dies, and a
// SIGINT, SIGTERM, SIGHUP or SIGQUIT the parent does not ignore ends the child's group before the parent. The
// caller must not have started threads the child would need (aclInit comes in the child), nor children of its
// own that it would wait for with waitpid(-1).
ChildOutcome run_isolated(const std::function<int(int records_fd)>& body, double case_timeout);

// "the plugin crashed (signal 11, Segmentation fault) ..." and so on: why a child that did
// not finish ended, for its case's failure line.
std::string describe_end(const ChildOutcome& outcome, double case_timeout);

}  // namespace nnplug::conformance
