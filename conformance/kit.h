// The conformance kit: checks a backend plugin through the public CANN API only, as a host
// program sees it (aclInit with a config that selects the plugin, aclCreateTensor, the two
// phases, aclrtMalloc/aclrtMemcpy/aclrtFree, streams). `nnplug conformance` runs it; what it
// checks is described in docs/writing-a-plugin.md.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nnplug::conformance {

// The range of KitOptions::case_timeout, in seconds; run_kit refuses any other value (NaN too).
inline constexpr double kMinCaseTimeout = 0.1;
inline constexpr double kMaxCaseTimeout = 3600;

struct KitOptions {
    std::string plugin;            // a backend name (libnnplug_<name>.so on the search path) or a path to one
    std::vector<std::string> ops;  // aclnn names to check; empty: every op the plugin serves
    bool every_op = false;         // check every op the SDK defines: one the plugin does not serve fails
    std::vector<std::string> groups;  // golden, random, errors, concurrency, refusals, memory; empty: all
    std::vector<std::string>
        backend_options;   // KEY=VALUE, the plugin's options (backends.<name> in the config)
    std::string data_dir;  // the golden case files; empty: share/nnplug/conformance beside the program
    bool allow_insecure_plugins = false;  // load a plugin that fails the ownership and permission checks
    bool quick = false;                   // fewer random cases and smaller concurrent runs
    uint64_t seed = 20261203;             // of the random cases
    unsigned threads = 4;                 // host threads (and streams) of the concurrency checks
    bool verbose = false;                 // print every failure and refusal, not only the first ones
    double case_timeout = 10;             // seconds a case may run before it counts as hung
};

// Runs every check on the plugin and prints a table per case group, the failures naming
// their case, and a one-line summary to `out`. Returns 0 when every case passed (or was
// refused with a message), 1 when one failed, 2 when the kit could not run (the plugin did
// not load, the data is missing).
int run_kit(const KitOptions& options, std::ostream& out);

// share/nnplug/conformance relative to the running program (bin/../share/nnplug/conformance),
// where the golden files are installed and mirrored in the build tree.
std::string default_data_dir();

}  // namespace nnplug::conformance
