// The side-by-side comparison: in one process and one run, for every case it measures
// a STREAM triad on buffers of the same element count (the bandwidth limit), nnplug
// through the public two-phase API, a naive scalar loop and PyTorch, interleaved and
// best of several repetitions, and prints GB/s, elements/s and the ratios. Cases come
// from two op families (--ops): bce (aclnnBinaryCrossEntropy and its Backward) and
// bce_with_logits (aclnnBinaryCrossEntropyWithLogits, its Backward and TargetBackward,
// without weight, and with a posWeight of [classes] broadcast against [N, classes]).
// --check compares ratios (never absolute times) with the targets and fails below them.
// A line per case on stderr shows progress; a ratio whose sides' repetitions disagree by
// more than --max-spread is marked unsteady, and the run ends with a warning.
#include <acl/acl.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bce_call.h"
#include "dtype_convert_simd.h"
#include "naive_bce.h"
#include "repeats.h"
#include "side_by_side.h"
#include "torch_bce.h"

namespace nnplug::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();
constexpr double kSlowCall = 0.25;  // s

struct Options {
    int threads = 0;
    int reps = 5;
    std::vector<std::string> sizes{"1K", "64K", "1M", "16M", "64M"};
    std::vector<std::string> dtypes{"float32", "float16", "bfloat16"};
    std::vector<std::string> ops{"bce", "bce_with_logits"};
    int64_t classes = 1000;
    std::string compare_backend = "atlas_emu";
    std::string compare_size = "16M";
    int small_calls = 20000;
    bool check = false;
    bool markdown = false;
    double min_seconds = 0.05;
    double max_spread = 0.10;
};

int64_t parse_size(const std::string& text) {
    size_t used = 0;
    const int64_t number = std::stoll(text, &used);
    const std::string suffix = text.substr(used);
    if (suffix.empty()) return number;
    if (suffix == "K") return number << 10;
    if (suffix == "M") return number << 20;
    throw CLI::ValidationError("size", "'" + text + "' is not a count like 1024, 64K or 16M");
}

std::string size_label(int64_t count) {
    if (count % (1 << 20) == 0) return std::to_string(count >> 20) + "M";
    if (count % (1 << 10) == 0) return std::to_string(count >> 10) + "K";
    return std::to_string(count);
}

aclDataType parse_dtype(const std::string& name) {
    if (name == "float32") return ACL_FLOAT;
    if (name == "float16") return ACL_FLOAT16;
    if (name == "bfloat16") return ACL_BF16;
    throw CLI::ValidationError("dtype", "'" + name + "' is not float32, float16 or bfloat16");
}

std::string op_label(const BceCase& c) {
    const std::string pass = !c.backward ? "forward" : c.target_grad ? "target-bwd" : "backward";
    const std::string reduction = c.reduction == 0 ? "none" : c.reduction == 1 ? "mean" : "sum";
    if (!c.logits) return pass + " " + reduction;
    return "logits " + pass + " " + reduction + (c.classes > 0 ? " +pw" : "");
}

// Elements, or rows x classes for a posWeight case.
std::string elements_label(const BceCase& c) {
    return c.classes > 0 ? std::to_string(c.numel / c.classes) + "x" + std::to_string(c.classes)
                         : size_label(c.numel);
}

bool selected(const Options& options, const std::string& family) {
    return std::find(options.ops.begin(), options.ops.end(), family) != options.ops.end();
}

// The rows of each family per dtype and size. With logits: no weight; "+pw" rows have
// a posWeight of [classes] against self [size / classes, classes].
std::vector<BceCase> family_cases(const Options& options, aclDataType dtype, int64_t numel) {
    std::vector<BceCase> cases;
    if (selected(options, "bce"))
        for (const auto& [backward, reduction] :
             {std::pair{true, 0}, std::pair{true, 1}, std::pair{false, 0}, std::pair{false, 1}})
            cases.push_back({backward, reduction, dtype, numel});
    if (selected(options, "bce_with_logits")) {
        cases.push_back({false, 0, dtype, numel, true});
        cases.push_back({false, 1, dtype, numel, true});
        cases.push_back({true, 0, dtype, numel, true});
        cases.push_back({true, 0, dtype, numel, true, true});
        const int64_t rows = options.classes > 0 ? numel / options.classes : 0;
        if (rows > 0) {
            cases.push_back({false, 1, dtype, rows * options.classes, true, false, options.classes});
            cases.push_back({true, 0, dtype, rows * options.classes, true, false, options.classes});
        }
    }
    return cases;
}

using nnplug::bench::seconds_per_call;

// The runtime of one backend for the lifetime of the object.
class Session {
public:
    Session(const std::string& backend, int threads) {
        // A fresh file (mkstemps: O_EXCL, an unpredictable name): a link planted in the
        // shared temporary folder is never written through.
        std::string path = (std::filesystem::temp_directory_path() / "nnplug_compare_XXXXXX.yaml").string();
        const int fd = mkstemps(path.data(), 5);
        if (fd < 0) {
            error_ = "cannot create a config in " + std::filesystem::temp_directory_path().string();
            return;
        }
        const std::string text =
            "backend: " + backend + "\nlog_level: error\n" +
            (backend == "cpu_tbb" ? "backends:\n  cpu_tbb:\n    threads: " + std::to_string(threads) + "\n"
                                  : "");
        const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        close(fd);
        const aclError status = written ? aclInit(path.c_str()) : ACL_ERROR_INVALID_FILE;
        std::filesystem::remove(path);
        if (status != ACL_SUCCESS) {
            error_ = aclGetRecentErrMsg();
            return;
        }
        ok_ = aclrtSetDevice(0) == ACL_SUCCESS;
        if (!ok_) error_ = aclGetRecentErrMsg();
        initialized_ = true;
    }
    ~Session() {
        if (initialized_) aclFinalize();
    }
    bool ok() const { return ok_; }
    const std::string& error() const { return error_; }

private:
    bool initialized_ = false;
    bool ok_ = false;
    std::string error_;
};

// The triad over the same thread count and partitioning policy as the backend.
class Triad {
public:
    explicit Triad(int threads) : arena_(threads), threads_(threads) {}
    void resize(int64_t count) {
        if (static_cast<int64_t>(a_.size()) >= count) return;
        a_.assign(static_cast<size_t>(count), 0.0f);
        b_.assign(static_cast<size_t>(count), 1.0f);
        c_.assign(static_cast<size_t>(count), 2.0f);
    }
    void run(int64_t count) {
        constexpr int64_t kGrain = 16384;
        if (threads_ == 1 || count <= kGrain) {
            triad_range(a_.data(), b_.data(), c_.data(), 3.0f, 0, count);
            return;
        }
        arena_.execute([&] {
            tbb::parallel_for(
                tbb::blocked_range<int64_t>(0, count, kGrain),
                [&](const tbb::blocked_range<int64_t>& r) {
                    triad_range(a_.data(), b_.data(), c_.data(), 3.0f, r.begin(), r.end());
                },
                tbb::static_partitioner());
        });
    }

private:
    tbb::task_arena arena_;
    int threads_;
    std::vector<float> a_, b_, c_;
};

struct Result {
    BceCase c;
    Repeats nnplug_runs, triad_runs, naive_runs, torch_runs;
    double nnplug = kNotMeasured, triad = kNotMeasured, naive = kNotMeasured,
           torch = kNotMeasured;  // s per call, the best repetition
    std::string note;
    double nnplug_gbs() const { return static_cast<double>(bytes_moved(c)) / nnplug * 1e-9; }
    double triad_gbs() const { return static_cast<double>(c.numel * kTriadBytesPerElement) / triad * 1e-9; }
};

std::string case_label(const BceCase& c) {
    return op_label(c) + " " + dtype_name(c.dtype) + " " + elements_label(c);
}

// "[ 3/60]  12 s  backward none float32 64M" on stderr before each case is measured, so a
// long run shows where it is without disturbing the table on stdout.
void progress(size_t index, size_t count, const std::string& what, Clock::time_point started) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    std::fprintf(stderr, "[%*zu/%zu] %5.0f s  %s\n", static_cast<int>(std::to_string(count).size()), index,
                 count, elapsed, what.c_str());
    std::fflush(stderr);
}

Result measure(const BceCase& c, const Options& options, Triad& triad, bool with_baselines) {
    Result result;
    result.c = c;
    HostOperands host = make_host_operands(c, 42);
    DeviceCase device(c, host);
    if (const int status = device.call()) {
        result.note = "nnplug: status " + std::to_string(status) + ": " + aclGetRecentErrMsg();
        return result;
    }
    std::unique_ptr<TorchCase> torch;
    if (with_baselines) {
        std::string why_not;
        torch = make_torch_case(c, host, why_not);
        if (!torch) result.note = why_not;
    }
    triad.resize(c.numel);
    for (int rep = 0; rep < options.reps; ++rep) {
        result.triad_runs.add(seconds_per_call([&] { triad.run(c.numel); }, options.min_seconds));
        result.nnplug_runs.add(seconds_per_call([&] { device.call(); }, options.min_seconds));
        if (!with_baselines) continue;
        // The naive loop is slow on large cases and needs no more than a few tries; so does
        // PyTorch once a call takes longer than kSlowCall (its composite with-logits ops).
        if (rep < 2 || c.numel <= (1 << 20))
            result.naive_runs.add(seconds_per_call([&] { naive_bce(c, host); }, options.min_seconds));
        if (torch && (rep < 2 || result.torch_runs.best() < kSlowCall))
            result.torch_runs.add(seconds_per_call([&] { torch->call(); }, options.min_seconds));
    }
    result.triad = result.triad_runs.best();
    result.nnplug = result.nnplug_runs.best();
    result.naive = result.naive_runs.best();
    result.torch = result.torch_runs.best();
    return result;
}

// Median and 90th percentile of single full two-phase calls of a small case.
struct SmallCall {
    BceCase c;
    double median_us = kNotMeasured, p90_us = kNotMeasured;
};

SmallCall measure_small_calls(const BceCase& c, int calls) {
    SmallCall result;
    result.c = c;
    HostOperands host = make_host_operands(c, 7);
    DeviceCase device(c, host);
    std::vector<double> times;
    times.reserve(static_cast<size_t>(calls));
    for (int i = 0; i < calls / 10; ++i) device.call();  // warm up caches and allocator
    for (int i = 0; i < calls; ++i) {
        const auto start = Clock::now();
        device.call();
        times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    result.median_us = times[times.size() / 2];
    result.p90_us = times[times.size() * 9 / 10];
    return result;
}

std::string fixed(double value, int digits) {
    if (std::isnan(value)) return "n/a";
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

// "triad 23%, nnplug 12%": the measured sides among `sides` whose best repetition is not
// reproduced within max_spread; empty when every ratio built on them can be trusted.
std::string unsteady(std::initializer_list<std::pair<const char*, const Repeats*>> sides, double max_spread) {
    std::string text;
    for (const auto& [name, runs] : sides) {
        if (runs->count() == 0 || runs->steady(max_spread)) continue;
        const double spread = runs->spread();
        text += (text.empty() ? "" : ", ") + std::string(name) + " " +
                (std::isnan(spread) ? "one repetition" : fixed(spread * 100, 0) + "%");
    }
    return text;
}

std::string unsteady(const Result& r, double max_spread) {
    return unsteady({{"nnplug", &r.nnplug_runs},
                     {"triad", &r.triad_runs},
                     {"naive", &r.naive_runs},
                     {"torch", &r.torch_runs}},
                    max_spread);
}

std::string cpu_model() {
    std::ifstream info("/proc/cpuinfo");
    std::string line;
    while (std::getline(info, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

void print_table(const std::vector<Result>& results, bool markdown) {
    const char* header[] = {"op",           "dtype",          "elements",   "nnplug us/call",
                            "nnplug GB/s",  "nnplug Melem/s", "triad GB/s", "nnplug/triad",
                            "nnplug/naive", "nnplug/torch",   "note"};
    if (markdown) {
        std::printf("|");
        for (const char* h : header) std::printf(" %s |", h);
        std::printf("\n|");
        for (size_t i = 0; i < std::size(header); ++i) std::printf("---|");
        std::printf("\n");
    } else {
        std::printf("%-26s %-9s %10s %14s %11s %14s %10s %12s %12s %12s  %s\n", header[0], header[1],
                    header[2], header[3], header[4], header[5], header[6], header[7], header[8], header[9],
                    header[10]);
    }
    for (const Result& r : results) {
        const std::string cells[] = {op_label(r.c),
                                     dtype_name(r.c.dtype),
                                     elements_label(r.c),
                                     fixed(r.nnplug * 1e6, 2),
                                     fixed(r.nnplug_gbs(), 2),
                                     fixed(static_cast<double>(r.c.numel) / r.nnplug * 1e-6, 1),
                                     fixed(r.triad_gbs(), 2),
                                     fixed(r.nnplug_gbs() / r.triad_gbs(), 2),
                                     fixed(r.naive / r.nnplug, 1),
                                     fixed(r.torch / r.nnplug, 2),
                                     r.note};
        if (markdown) {
            std::printf("|");
            for (const auto& cell : cells) std::printf(" %s |", cell.c_str());
            std::printf("\n");
        } else {
            std::printf("%-26s %-9s %10s %14s %11s %14s %10s %12s %12s %12s  %s\n", cells[0].c_str(),
                        cells[1].c_str(), cells[2].c_str(), cells[3].c_str(), cells[4].c_str(),
                        cells[5].c_str(), cells[6].c_str(), cells[7].c_str(), cells[8].c_str(),
                        cells[9].c_str(), cells[10].c_str());
        }
    }
}

// One ratio target of the issue; a missing measurement (no torch, no second backend, an
// op family not selected) is skipped; a case whose nnplug call failed is not met.
struct Target {
    std::string what;
    double value;
    double minimum;
    std::string failure = {};
    std::string unsteady = {};  // the sides whose repetitions disagree (see unsteady())
};

int report_targets(const std::vector<Target>& targets, bool check) {
    int failures = 0;
    int unsteady_targets = 0;
    std::printf("\n%s\n", check ? "Checks (ratios only):" : "Targets:");
    for (const Target& t : targets) {
        const bool failed = !t.failure.empty();
        const bool skipped = !failed && std::isnan(t.value);
        const bool met = !failed && !skipped && t.value >= t.minimum;
        if (!skipped && !met) ++failures;
        const bool shaky = !skipped && !failed && !t.unsteady.empty();
        if (shaky) ++unsteady_targets;
        std::printf("  %-62s %8s  >= %-5s %s%s\n", t.what.c_str(), fixed(t.value, 2).c_str(),
                    fixed(t.minimum, 2).c_str(),
                    failed    ? ("NOT MET (" + t.failure + ")").c_str()
                    : skipped ? "skipped"
                    : met     ? "met"
                              : "NOT MET",
                    shaky ? (", unsteady: " + t.unsteady).c_str() : "");
    }
    if (unsteady_targets > 0)
        std::printf(
            "Warning: unsteady repetitions (see --max-spread) behind %d of the ratios above; "
            "they are noise, not a measurement: rerun on a quiet machine.\n",
            unsteady_targets);
    return failures;
}

const Result* find(const std::vector<Result>& results, const BceCase& key) {
    for (const Result& r : results)
        if (same_case(r.c, key)) return &r;
    return nullptr;
}

void print_header(const Options& options, int threads) {
    std::string torch_note;
    const bool have_torch = torch_available(torch_note);
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::printf("nnplug compare_bce, %s, %s, %u hardware threads, %d threads used, SIMD target %s\n", date,
                cpu_model().c_str(), std::thread::hardware_concurrency(), threads,
                nnplug::simd::target_name());
    std::printf("PyTorch: %s; triad and PyTorch run on the same thread count; best of %d repetitions\n\n",
                have_torch ? "libtorch (C++)" : torch_note.c_str(), options.reps);
    std::fflush(stdout);
}

// The cases of the run: what the targets need with --check, else every family, dtype and size.
std::vector<BceCase> cases_to_run(const Options& options, int64_t compare_numel) {
    std::vector<BceCase> cases;
    if (options.check) {
        if (selected(options, "bce"))
            cases = {{true, 0, ACL_FLOAT, 64 << 10},   {true, 0, ACL_FLOAT, compare_numel},
                     {true, 0, ACL_FLOAT, 64 << 20},   {false, 1, ACL_FLOAT, 64 << 20},
                     {true, 0, ACL_FLOAT16, 64 << 20}, {true, 0, ACL_BF16, 64 << 20}};
        if (selected(options, "bce_with_logits")) {
            cases.push_back({true, 0, ACL_FLOAT, 64 << 20, true});
            cases.push_back({false, 1, ACL_FLOAT, 64 << 20, true});
        }
    } else {
        for (const auto& dtype : options.dtypes)
            for (const auto& size : options.sizes)
                for (const BceCase& c : family_cases(options, parse_dtype(dtype), parse_size(size)))
                    cases.push_back(c);
    }
    return cases;
}

// Every case on cpu_tbb, a progress line before each; a row whose ratios rest on unsteady
// repetitions says so in its note. Returns the count of such rows.
int measure_cases(const std::vector<BceCase>& cases, const Options& options, Triad& triad,
                  Clock::time_point started, std::vector<Result>& results) {
    int unsteady_rows = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        progress(i + 1, cases.size(), case_label(cases[i]), started);
        results.push_back(measure(cases[i], options, triad, !options.check || cases[i].numel == (64 << 10)));
        Result& r = results.back();
        if (const std::string shaky = unsteady(r, options.max_spread); !shaky.empty()) {
            r.note += (r.note.empty() ? "" : "; ") + ("unsteady: " + shaky);
            ++unsteady_rows;
        }
        if (!options.markdown) print_table({r}, false);
        std::fflush(stdout);
    }
    return unsteady_rows;
}

// The second backend on `compared`, against cpu_tbb's result for it: elements/s over cpu_tbb's.
struct BackendComparison {
    double ratio = kNotMeasured;
    std::string unsteady;
};

BackendComparison compare_backend(const Options& options, int threads, Triad& triad, const Result& own,
                                  Clock::time_point started, size_t case_count) {
    BackendComparison comparison;
    const BceCase& compared = own.c;
    Session session(options.compare_backend, threads);
    if (!session.ok()) {
        std::printf("\n%s skipped: %s\n", options.compare_backend.c_str(), session.error().c_str());
        return comparison;
    }
    progress(case_count, case_count, options.compare_backend + " " + case_label(compared), started);
    const Result other = measure(compared, options, triad, false);
    comparison.unsteady =
        unsteady({{"cpu_tbb", &own.nnplug_runs}, {options.compare_backend.c_str(), &other.nnplug_runs}},
                 options.max_spread);
    comparison.ratio = own.nnplug / other.nnplug;
    std::printf("\n%s, %s %s %s: %s us/call, %s Melem/s; cpu_tbb %s Melem/s\n",
                options.compare_backend.c_str(), op_label(compared).c_str(),
                dtype_name(compared.dtype).c_str(), size_label(compared.numel).c_str(),
                fixed(other.nnplug * 1e6, 1).c_str(),
                fixed(static_cast<double>(compared.numel) / other.nnplug * 1e-6, 1).c_str(),
                fixed(static_cast<double>(compared.numel) / own.nnplug * 1e-6, 1).c_str());
    return comparison;
}

std::vector<Target> targets_of(const std::vector<Result>& results, const Options& options,
                               const BackendComparison& comparison) {
    // A case's GB/s over the triad's: skipped when the case was not run, not met when nnplug failed on it.
    const auto triad_target = [&](const BceCase& key, double minimum) {
        const Result* r = find(results, key);
        Target target{op_label(key) + " " + dtype_name(key.dtype) + " " + size_label(key.numel) +
                          ": GB/s over triad GB/s",
                      r ? r->nnplug_gbs() / r->triad_gbs() : kNotMeasured, minimum};
        if (r && std::isnan(r->nnplug)) target.failure = "nnplug failed";
        if (r)
            target.unsteady =
                unsteady({{"nnplug", &r->nnplug_runs}, {"triad", &r->triad_runs}}, options.max_spread);
        return target;
    };
    const Result* in_cache = find(results, {true, 0, ACL_FLOAT, 64 << 10});
    const double torch_speedup = in_cache ? in_cache->torch / in_cache->nnplug : kNotMeasured;
    Target torch_target{"backward none float32 64K: PyTorch time over nnplug time", torch_speedup, 3.0};
    if (in_cache)
        torch_target.unsteady = unsteady(
            {{"nnplug", &in_cache->nnplug_runs}, {"torch", &in_cache->torch_runs}}, options.max_spread);
    return {
        triad_target({true, 0, ACL_FLOAT, 64 << 20}, 0.85),
        triad_target({false, 1, ACL_FLOAT, 64 << 20}, 0.80),
        triad_target({true, 0, ACL_FLOAT16, 64 << 20}, 0.75),
        triad_target({true, 0, ACL_BF16, 64 << 20}, 0.75),
        torch_target,
        {options.compare_backend + " over cpu_tbb elements/s, backward float32 " + options.compare_size,
         comparison.ratio, 0.25, "", comparison.unsteady},
        triad_target({true, 0, ACL_FLOAT, 64 << 20, true}, 0.85),
        triad_target({false, 1, ACL_FLOAT, 64 << 20, true}, 0.70),
    };
}

int run(const Options& options) {
    unsetenv("NNPLUG_BACKEND");  // the driver names each backend itself
    const int threads = options.threads > 0
                            ? options.threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch_set_threads(threads);
    print_header(options, threads);
    const int64_t compare_numel = parse_size(options.compare_size);
    const std::vector<BceCase> cases = cases_to_run(options, compare_numel);

    std::vector<Result> results;
    int unsteady_rows = 0;
    const auto started = Clock::now();
    SmallCall small;
    small.c = {true, 0, ACL_FLOAT, 1024};
    Triad triad(threads);
    {
        Session session("cpu_tbb", threads);
        if (!session.ok()) {
            std::fprintf(stderr, "cannot start cpu_tbb: %s\n", session.error().c_str());
            return 2;
        }
        unsteady_rows = measure_cases(cases, options, triad, started, results);
        if (!options.check) {
            progress(cases.size(), cases.size(), "small calls (" + case_label(small.c) + ")", started);
            small = measure_small_calls(small.c, options.small_calls);
        }
    }

    // The second backend on the float32 backward of compare_size elements.
    BackendComparison comparison;
    if (const Result* own = find(results, {true, 0, ACL_FLOAT, compare_numel});
        !options.compare_backend.empty() && own != nullptr)
        comparison = compare_backend(options, threads, triad, *own, started, cases.size());

    if (options.markdown) print_table(results, true);
    if (unsteady_rows > 0)
        std::printf(
            "\nWarning: %d of %zu rows are unsteady: the two fastest of their %d repetitions differ by more "
            "than %s%% on the sides named in the note column, so their ratios are noise (a busy machine).\n",
            unsteady_rows, results.size(), options.reps, fixed(options.max_spread * 100, 0).c_str());
    if (!std::isnan(small.median_us))
        std::printf(
            "\nSmall call, %s %s %s, full two-phase call (GetWorkspaceSize, run, synchronize) over %d calls: "
            "median %s us, p90 %s us\n",
            op_label(small.c).c_str(), dtype_name(small.c.dtype).c_str(), size_label(small.c.numel).c_str(),
            options.small_calls, fixed(small.median_us, 2).c_str(), fixed(small.p90_us, 2).c_str());

    const int failures = report_targets(targets_of(results, options, comparison), options.check);
    if (!std::isnan(small.median_us))
        std::printf("  %-62s %8s  <= 2.00  %s (absolute, reported only)\n", "1K two-phase call median, us",
                    fixed(small.median_us, 2).c_str(), small.median_us <= 2.0 ? "met" : "NOT MET");
    return options.check && failures > 0 ? 1 : 0;
}

}  // namespace
}  // namespace nnplug::bench

namespace {
int run_main(int argc, char** argv) {
    nnplug::bench::Options options;
    CLI::App app{
        "Side-by-side benchmark of nnplug's binary cross-entropy: triad, nnplug, naive loop, PyTorch"};
    app.add_option("--threads", options.threads, "threads for nnplug, the triad and PyTorch (0: every core)");
    app.add_option("--reps", options.reps, "repetitions; the best one counts")->check(CLI::PositiveNumber);
    app.add_option("--sizes", options.sizes, "element counts, e.g. 1K 64K 16M")->delimiter(',');
    app.add_option("--dtypes", options.dtypes, "float32, float16, bfloat16")->delimiter(',');
    app.add_option("--ops", options.ops, "op families: bce, bce_with_logits")
        ->delimiter(',')
        ->check(CLI::IsMember({"bce", "bce_with_logits"}));
    app.add_option("--classes", options.classes,
                   "posWeight length C of the [N, C] with-logits cases (0: none)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--compare-backend", options.compare_backend,
                   "a second backend to compare with ('' for none)");
    app.add_option("--compare-size", options.compare_size, "element count of that comparison");
    app.add_option("--small-calls", options.small_calls, "single 1K calls timed for the median")
        ->check(CLI::PositiveNumber);
    app.add_option("--min-seconds", options.min_seconds, "time per measurement of one repetition");
    app.add_option("--max-spread", options.max_spread,
                   "largest relative gap between the two fastest repetitions of a ratio's sides before the "
                   "ratio is marked unsteady")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--check", options.check,
                 "measure only what the targets need; exit 1 if a ratio is below its target");
    app.add_flag("--markdown", options.markdown, "print the results as one Markdown table");
    CLI11_PARSE(app, argc, argv);
    try {
        return nnplug::bench::run(options);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "compare_bce: %s\n", error.what());
        return 2;
    }
}
}  // namespace

// No exception leaves main: one that escapes the run (an allocation that fails, say) ends
// the program with its text.
int main(int argc, char** argv) {
    try {
        return run_main(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_compare_bce: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "nnplug_compare_bce: an unknown exception\n");
    }
    return 1;
}
