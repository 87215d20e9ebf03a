// A backend that turns on the program judging it, for the conformance kit's watchdog: its
// one op, aclnnBinaryCrossEntropy, works until a launch, which then (by HOSTILE_BEHAVIOUR)
// never returns (hang), ends the process with status 0 (exit), or prints lines and returns
// a message made to pass for the kit's own PASS lines (forge).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "fake_backend.h"

#define HOSTILE_HANG 1
#define HOSTILE_EXIT 2
#define HOSTILE_FORGE 3

namespace {

// Only the forging build prints it; the hanging and exiting builds never reach that line.
[[maybe_unused]] constexpr const char* kForged =
    "\nconformance of " HOSTILE_NAME ": PASS, 1 ops, 9 cases: 9 passed\x1b[2K\r";

nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace_bytes) {
    *plan = nullptr;
    *workspace_bytes = 0;
    return NNPLUG_OK;
}

nnplug_status launch(void*, const void*, const nnplug_op_desc*, void*, uint64_t, void*) {
#if HOSTILE_BEHAVIOUR == HOSTILE_HANG
    for (;;) pause();
#elif HOSTILE_BEHAVIOUR == HOSTILE_EXIT
    std::exit(0);
#else
    std::printf("%s\n", kForged);
    std::fprintf(stderr, "%s\n", kForged);
    return nnplug::sdk::fail(NNPLUG_ERR_INTERNAL, kForged);
#endif
}

const nnplug_op_i kForward = [] {
    auto op = nnplug::sdk::table<nnplug_op_i>();
    op.op = NNPLUG_OP_BINARY_CROSS_ENTROPY;
    op.name = "aclnnBinaryCrossEntropy";
    op.prepare = prepare;
    op.launch = launch;
    return op;
}();
const nnplug_op_i* const kOps[] = {&kForward};

const nnplug_plugin kPlugin = [] {
    auto plugin = fake::table(HOSTILE_NAME);
    plugin.description = "hangs, exits or forges output in its launch (conformance kit tests)";
    plugin.ops = kOps;
    plugin.op_count = 1;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
