// A backend that turns on the program judging it, for the conformance kit's watchdog: its
// one op, aclnnBinaryCrossEntropy, works until a launch, which then (by HOSTILE_BEHAVIOUR)
// never returns (hang), ends the process with status 0 (exit), prints lines and returns a
// message made to pass for the kit's own PASS lines (forge), or sends SIGTERM to its whole
// process group (kill_group). The helper build's create() starts two processes that would
// run forever, one in its process group and one that leaves it (setsid), each writing its
// pid to the file $HOSTILE_PID_FILE names. The flood build's first launch prints a line of
// 32 MiB, then 100,000 short ones.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fake_backend.h"

#define HOSTILE_HANG 1
#define HOSTILE_EXIT 2
#define HOSTILE_FORGE 3
#define HOSTILE_KILL_GROUP 4
#define HOSTILE_HELPER 5
#define HOSTILE_FLOOD 6

namespace {

// Only the forging build prints it; the hanging and exiting builds never reach that line.
[[maybe_unused]] constexpr const char* kForged =
    "\nconformance of " HOSTILE_NAME ": PASS, 1 ops, 9 cases: 9 passed\x1b[2K\r";

nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace_bytes) {
    *plan = nullptr;
    *workspace_bytes = 0;
    return NNPLUG_OK;
}

// Appends this process's pid to $HOSTILE_PID_FILE, says so on `ready`, then waits forever.
[[noreturn]] void helper(int ready) {
    if (const char* file = std::getenv("HOSTILE_PID_FILE"); file != nullptr) {
        const int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        char line[32];
        const int length = std::snprintf(line, sizeof line, "%d\n", static_cast<int>(getpid()));
        if (fd >= 0) (void)!write(fd, line, static_cast<size_t>(length));
        if (fd >= 0) close(fd);
    }
    (void)!write(ready, "r", 1);
    close(ready);
    for (;;) pause();
}

// Returns once both helpers run, so that the kit finds them whatever the timing.
[[maybe_unused]] nnplug_status create_with_helpers(const nnplug_option* options, size_t count, int32_t device,
                                                   void** ctx) {
    int ready[2];
    if (pipe(ready) != 0) return nnplug::sdk::fail(NNPLUG_ERR_INTERNAL, "pipe failed");
    if (fork() == 0) helper(ready[1]);
    if (fork() == 0) {
        setsid();
        if (fork() == 0) helper(ready[1]);  // a daemon: its parent gone, it is nobody's child
        _exit(0);
    }
    close(ready[1]);
    char byte;
    for (int started = 0; started < 2 && read(ready[0], &byte, 1) == 1;) ++started;
    close(ready[0]);
    return fake::create(options, count, device, ctx);
}

nnplug_status launch(void*, const void*, const nnplug_op_desc*, void*, uint64_t, void*) {
#if HOSTILE_BEHAVIOUR == HOSTILE_HANG
    for (;;) pause();
#elif HOSTILE_BEHAVIOUR == HOSTILE_EXIT
    std::exit(0);
#elif HOSTILE_BEHAVIOUR == HOSTILE_KILL_GROUP
    kill(0, SIGTERM);
    for (;;) pause();
#elif HOSTILE_BEHAVIOUR == HOSTILE_HELPER
    return nnplug::sdk::fail(NNPLUG_ERR_INTERNAL, "this build computes nothing");
#elif HOSTILE_BEHAVIOUR == HOSTILE_FLOOD
    static bool printed = false;  // once per process
    if (!printed) {
        printed = true;
        const std::string line(size_t{32} << 20, 'x');
        std::fwrite(line.data(), 1, line.size(), stdout);
        for (int i = 0; i < 100000; ++i) std::printf("\nline %d", i);
    }
    return nnplug::sdk::fail(NNPLUG_ERR_INTERNAL, "this build only prints");
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
    plugin.description =
        "hangs, exits, forges output or signals its group in its launch, or starts helper "
        "processes (conformance kit tests)";
#if HOSTILE_BEHAVIOUR == HOSTILE_HELPER
    plugin.create = create_with_helpers;
#endif
    plugin.ops = kOps;
    plugin.op_count = 1;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
