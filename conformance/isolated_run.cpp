#include "isolated_run.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "kit_internal.h"

namespace nnplug::conformance {
namespace {

// What the child tells the watchdog without a syscall: the case it runs and how many it
// has started. A shared anonymous mapping, so that it survives the child's death.
struct Progress {
    std::atomic<uint64_t> cases{0};
    char group[64];
    char op[128];
    char name[256];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

Progress* g_progress = nullptr;  // set in the child

constexpr char kDoneMark[] = "D\n";

// An unnamed temporary file for what the child leaves, read by the parent afterwards.
int scratch_file() {
    FILE* file = std::tmpfile();
    if (file == nullptr) return -1;
    const int fd = dup(fileno(file));
    std::fclose(file);
    return fd;
}

std::string read_all(int fd) {
    std::string text;
    if (lseek(fd, 0, SEEK_SET) != 0) return text;
    char buffer[65536];
    for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<size_t>(got));
    return text;
}

void copy_field(char* to, size_t size, const std::string& from) {
    std::snprintf(to, size, "%s", from.c_str());
}

[[noreturn]] void run_child(const std::function<int(int)>& body, int records, int output) {
    dup2(output, STDOUT_FILENO);
    dup2(output, STDERR_FILENO);
    int code = 2;
    try {
        code = body(records);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "the kit failed: %s\n", error.what());
    }
    std::fflush(nullptr);
    (void)!write(records, kDoneMark, sizeof kDoneMark - 1);
    _exit(code);
}

// Waits for pid; SIGKILL once no case has started for timeout seconds. True when it was stopped.
bool watch(pid_t pid, const Progress& progress, double timeout, int& status) {
    using Clock = std::chrono::steady_clock;
    uint64_t seen = progress.cases.load();
    auto since = Clock::now();
    for (;;) {
        const pid_t ended = waitpid(pid, &status, WNOHANG);
        if (ended == pid || (ended < 0 && errno != EINTR)) return false;
        const uint64_t now_cases = progress.cases.load();
        if (now_cases != seen) {
            seen = now_cases;
            since = Clock::now();
        } else if (std::chrono::duration<double>(Clock::now() - since).count() > timeout) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace

void note_case(const char* group, const char* op, const std::string& name) {
    if (g_progress == nullptr) return;
    copy_field(g_progress->group, sizeof g_progress->group, group);
    copy_field(g_progress->op, sizeof g_progress->op, op);
    copy_field(g_progress->name, sizeof g_progress->name, name);
    g_progress->cases.fetch_add(1);
}

void running(const char* group, const char* op, const std::string& name) {
    note_case(group, op, name);
}

ChildOutcome run_isolated(const std::function<int(int)>& body, double case_timeout) {
    ChildOutcome outcome;
    void* shared = mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    const int records = scratch_file(), output = scratch_file();
    if (shared == MAP_FAILED || records < 0 || output < 0) {
        outcome.error = std::string("cannot make the child's scratch files: ") + std::strerror(errno);
        if (shared != MAP_FAILED) munmap(shared, sizeof(Progress));
        for (const int fd : {records, output})
            if (fd >= 0) close(fd);
        return outcome;
    }
    auto* progress = new (shared) Progress;
    std::fflush(nullptr);  // nothing buffered may be written twice
    const pid_t pid = fork();
    if (pid == 0) {
        g_progress = progress;
        run_child(body, records, output);
    }
    if (pid < 0) {
        outcome.error = std::string("cannot fork: ") + std::strerror(errno);
    } else {
        int status = 0;
        const bool stopped = watch(pid, *progress, case_timeout, status);
        outcome.records = read_all(records);
        outcome.output = read_all(output);
        const bool done = outcome.records.size() >= 2 &&
                          outcome.records.compare(outcome.records.size() - 2, 2, kDoneMark) == 0;
        if (stopped) {
            outcome.end = ChildOutcome::End::kHung;
        } else if (WIFSIGNALED(status)) {
            outcome.end = ChildOutcome::End::kCrashed;
            outcome.code = WTERMSIG(status);
        } else {
            outcome.end = done ? ChildOutcome::End::kFinished : ChildOutcome::End::kExited;
            outcome.code = WEXITSTATUS(status);
        }
        if (progress->cases.load() > 0) {
            outcome.group = progress->group;
            outcome.op = progress->op;
            outcome.name = progress->name;
        }
    }
    munmap(shared, sizeof(Progress));
    close(records);
    close(output);
    return outcome;
}

std::string describe_end(const ChildOutcome& outcome, double case_timeout) {
    char text[160];
    switch (outcome.end) {
        case ChildOutcome::End::kCrashed:
            std::snprintf(text, sizeof text, "the plugin crashed (signal %d, %s)", outcome.code,
                          strsignal(outcome.code));
            break;
        case ChildOutcome::End::kExited:
            std::snprintf(text, sizeof text, "the plugin ended the process (exit status %d)", outcome.code);
            break;
        case ChildOutcome::End::kHung:
            std::snprintf(text, sizeof text,
                          "the case did not finish within %g s (--case-timeout) and was stopped",
                          case_timeout);
            break;
        case ChildOutcome::End::kNotStarted:
            return "the case could not be run: " + outcome.error;
        case ChildOutcome::End::kFinished:
            return "finished";
    }
    return text;
}

}  // namespace nnplug::conformance
