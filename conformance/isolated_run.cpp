#include "isolated_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
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

// What a child prints, taken from a pipe while it runs: the first kOutputKept bytes are
// kept, the rest counted and dropped, so a plugin that prints without end costs the kit
// neither memory nor disk.
class OutputPipe {
public:
    OutputPipe() {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) != 0) return;
        read_ = ends[0];
        write_ = ends[1];
        fcntl(read_, F_SETFL, O_NONBLOCK);
    }
    ~OutputPipe() {
        close_write_end();
        if (read_ >= 0) close(read_);
    }
    OutputPipe(const OutputPipe&) = delete;
    OutputPipe& operator=(const OutputPipe&) = delete;
    bool ok() const { return read_ >= 0; }
    int write_end() const { return write_; }
    void close_write_end() {
        if (write_ >= 0) close(write_);
        write_ = -1;
    }
    // Takes what the pipe holds, waiting up to wait_ms for something. Returns the bytes
    // taken, or -1 at the end (every writer gone).
    int64_t drain(int wait_ms) {
        pollfd ready{read_, POLLIN, 0};
        if (poll(&ready, 1, wait_ms) <= 0) return 0;
        int64_t taken = 0;
        char buffer[65536];
        for (;;) {
            const ssize_t got = read(read_, buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return taken;  // EAGAIN: all taken for now
            if (got == 0) return taken > 0 ? taken : -1;
            taken += got;
            total_ += static_cast<uint64_t>(got);
            if (head_.size() < kOutputKept)
                head_.append(buffer, std::min(static_cast<size_t>(got), kOutputKept - head_.size()));
        }
    }
    std::string& head() { return head_; }
    uint64_t total() const { return total_; }

private:
    int read_ = -1, write_ = -1;
    std::string head_;
    uint64_t total_ = 0;
};

void copy_field(char* to, size_t size, const std::string& from) {
    std::snprintf(to, size, "%s", from.c_str());
}

// The process group of the child being watched, for end_group_and_die; 0 when none.
volatile sig_atomic_t g_child_group = 0;

// The signals a user stops the kit with. The child runs in a process group of its own, which
// a terminal's Ctrl-C no longer reaches: the kit ends that group before it dies.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void end_group_and_die(int signal_number) {
    if (g_child_group > 0) kill(-g_child_group, SIGKILL);
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigaction(signal_number, &fallback, nullptr);
    raise(signal_number);
}

// Installs end_group_and_die for the stop signals the kit does not ignore; the destructor
// puts the previous actions back.
class StopSignals {
public:
    StopSignals() {
        for (size_t i = 0; i < std::size(kStopSignals); ++i) {
            sigaction(kStopSignals[i], nullptr, &previous_[i]);
            if (previous_[i].sa_handler != SIG_DFL) continue;  // ignored or handled by the program
            struct sigaction action {};
            action.sa_handler = end_group_and_die;
            sigemptyset(&action.sa_mask);
            sigaction(kStopSignals[i], &action, nullptr);
        }
    }
    ~StopSignals() { restore(); }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    void restore() const {
        for (size_t i = 0; i < std::size(kStopSignals); ++i)
            sigaction(kStopSignals[i], &previous_[i], nullptr);
    }

private:
    struct sigaction previous_[std::size(kStopSignals)]{};
};

// The kit's children now: as a child subreaper (PR_SET_CHILD_SUBREAPER), the orphans of its
// children become its own, even those that left the child's process group with setsid.
std::set<pid_t> children() {
    std::set<pid_t> pids;
    DIR* tasks = opendir("/proc/self/task");
    if (tasks == nullptr) return pids;
    while (const dirent* task = readdir(tasks)) {
        if (task->d_name[0] == '.') continue;
        const std::string file = std::string("/proc/self/task/") + task->d_name + "/children";
        const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char text[4096];
        const ssize_t got = read(fd, text, sizeof text - 1);
        close(fd);
        if (got <= 0) continue;
        text[got] = '\0';
        char* at = text;
        for (char* end = nullptr;; at = end) {
            const long pid = std::strtol(at, &end, 10);
            if (end == at) break;
            pids.insert(static_cast<pid_t>(pid));
        }
    }
    closedir(tasks);
    return pids;
}

// Ends whatever the child left running once it has ended: every process of its group, and
// every process handed to the kit as its orphan that was not a child of the kit before
// (`before`). Returns how many there were.
int end_leftovers(pid_t group, const std::set<pid_t>& before) {
    std::set<pid_t> ended;
    bool stranger = false;  // a member of the group that is not the kit's child
    // Rounds, since one of them may fork while the others are killed.
    for (int round = 0; round < 200; ++round) {
        std::set<pid_t> running;
        for (const pid_t pid : children())  // an orphan that had ended is reaped, not counted
            if (before.count(pid) == 0 && waitpid(pid, nullptr, WNOHANG) == 0) running.insert(pid);
        const bool in_group = kill(-group, SIGKILL) == 0;
        for (const pid_t pid : running) {
            kill(pid, SIGKILL);
            while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
            ended.insert(pid);
        }
        if (running.empty() && !in_group) break;
        stranger = stranger || (in_group && running.empty());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return static_cast<int>(ended.size()) + (ended.empty() && stranger ? 1 : 0);
}

[[noreturn]] void run_child(const std::function<int(int)>& body, int records, int output) {
    // A process group of its own: a plugin signalling its group (kill(0, ...)) reaches the
    // child and what it started, never the kit. It dies with the kit, and reads nothing.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (const int nothing = open("/dev/null", O_RDONLY | O_CLOEXEC); nothing >= 0) {
        dup2(nothing, STDIN_FILENO);
        close(nothing);
    }
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
// The child's output is taken meanwhile.
bool watch(pid_t pid, const Progress& progress, double timeout, int& status, OutputPipe& output) {
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
        output.drain(10);
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
    const int records = scratch_file();
    OutputPipe output;
    if (shared == MAP_FAILED || records < 0 || !output.ok()) {
        outcome.error = std::string("cannot make the child's scratch file and pipe: ") + std::strerror(errno);
        if (shared != MAP_FAILED) munmap(shared, sizeof(Progress));
        if (records >= 0) close(records);
        return outcome;
    }
    auto* progress = new (shared) Progress;
    std::fflush(nullptr);  // nothing buffered may be written twice
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const std::set<pid_t> before = children();
    const pid_t kit = getpid();
    StopSignals stop_signals;
    const pid_t pid = fork();
    if (pid == 0) {
        stop_signals.restore();
        if (getppid() != kit) _exit(2);  // the kit died before PR_SET_PDEATHSIG
        g_progress = progress;
        run_child(body, records, output.write_end());
    }
    output.close_write_end();
    if (pid < 0) {
        outcome.error = std::string("cannot fork: ") + std::strerror(errno);
    } else {
        setpgid(pid, pid);  // also here: no signal to the group may come before the child's own call
        g_child_group = pid;
        int status = 0;
        const bool stopped = watch(pid, *progress, case_timeout, status, output);
        outcome.leftovers = end_leftovers(pid, before);
        g_child_group = 0;
        while (output.drain(20) > 0) {  // until every writer is gone, or silent
        }
        outcome.records = read_all(records);
        outcome.output = std::move(output.head());
        outcome.output_bytes = output.total();
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
