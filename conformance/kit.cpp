// The kit's driver: a config selecting the plugin, aclInit, the ops the plugin serves, the
// groups, the tables and the summary.
#include "kit.h"

#include <nnplug/escaped_text.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <ostream>
#include <sstream>

#include "isolated_run.h"
#include "kit_internal.h"

namespace nnplug::conformance {

namespace {

namespace fs = std::filesystem;

// YAML single-quoted scalar.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// The name a plugin path stands for: libnnplug_<name>.so gives <name>.
std::string plugin_name(const std::string& plugin) {
    if (plugin.find('/') == std::string::npos) return plugin;
    std::string file = fs::path(plugin).filename().string();
    if (file.rfind("libnnplug_", 0) == 0) file = file.substr(10);
    if (const auto dot = file.find(".so"); dot != std::string::npos) file = file.substr(0, dot);
    return file;
}

// A scratch folder holding the config the kit hands to aclInit; removed with the object.
class ScratchConfig {
public:
    explicit ScratchConfig(const KitOptions& options) {
        char pattern[] = "/tmp/nnplug-conformance-XXXXXX";
        if (mkdtemp(pattern) == nullptr) throw std::runtime_error("cannot make a scratch folder in /tmp");
        folder_ = pattern;
        std::string backend = options.plugin;
        if (backend.find('/') != std::string::npos)
            backend = fs::absolute(backend).lexically_normal().string();
        std::ostringstream yaml;
        yaml << "# written by nnplug conformance\n";
        yaml << "backend: " << quoted(backend) << "\n";
        yaml << "log_level: off\n";
        if (options.allow_insecure_plugins) yaml << "allow_insecure_plugins: true\n";
        if (!options.backend_options.empty()) {
            yaml << "backends:\n  " << quoted(plugin_name(options.plugin)) << ":\n";
            for (const std::string& option : options.backend_options) {
                const auto equals = option.find('=');
                if (equals == std::string::npos)
                    throw std::runtime_error("--option '" + option + "' is not KEY=VALUE");
                yaml << "    " << quoted(option.substr(0, equals)) << ": "
                     << quoted(option.substr(equals + 1)) << "\n";
            }
        }
        text_ = yaml.str();
        file_ = folder_ / "conformance.yaml";
        std::ofstream(file_) << text_;
    }
    ~ScratchConfig() {
        std::error_code ignored;
        fs::remove_all(folder_, ignored);
    }
    const fs::path& file() const { return file_; }

private:
    fs::path folder_, file_;
    std::string text_;
};

// Whether the plugin serves op: a valid call's first phase is not refused as an op the
// backend does not implement.
bool serves(const OpUnderTest& op, std::string& why_not) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status;
    if (op.class_kit != nullptr) {
        const ClassCase probe = op.class_kit->random(1, true).front();
        std::vector<std::unique_ptr<DeviceTensor>> tensors;
        std::vector<const aclTensor*> arguments;
        for (const HostTensor& t : probe.tensors) {
            tensors.push_back(t.present ? std::make_unique<DeviceTensor>(t.values, t.shape, t.dtype)
                                        : nullptr);
            arguments.push_back(t.present ? tensors.back()->get() : nullptr);
        }
        status = op.class_kit->first_phase(arguments, probe.attrs, &workspace, &executor);
    } else {
        const RandomCase probe = concurrency_case(op, 1, {2, 3});
        UploadedCase uploaded(probe.golden);
        status = uploaded.first_phase(&workspace, &executor);
    }
    if (status == ACLNN_SUCCESS) {
        aclDestroyAclOpExecutor(executor);
        return true;
    }
    why_not = aclGetRecentErrMsg();
    return why_not.find("does not implement") == std::string::npos;
}

std::string seconds(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", value);
    return text;
}

// Prints the tables of the groups named in `names` (those that have cases), in the order below.
void print_groups(const Report& report, std::ostream& out, bool verbose,
                  const std::vector<std::string>& names) {
    static const std::pair<const char*, const char*> kDescriptions[] = {
        {"ops", "the ops asked for with --ops, served by the plugin"},
        {kGroupGolden,
         "golden cases (tests/golden): canonical bits or ulps, float64 reference, storage around out's view"},
        {kGroupRandom,
         "random shapes, broadcasts, views, dtypes and reductions: canonical float32 and float64 reference"},
        {kGroupUntouched, "storage outside out's view and every input's storage unchanged"},
        {kGroupRepeat,
         "a repeatable executor run three times, moved by aclSetTensorAddr, and a fresh one: the same bits"},
        {kGroupErrors, "first-phase errors with their codes and messages, second-phase misuse, empty self"},
        {kGroupConcurrency,
         "launches from several threads on their own streams, and on several streams of one thread"},
        {kGroupRefusals,
         "an operand in host memory: computed as with device memory, or refused with a message"},
        {kGroupMemory, "aclrtMalloc, aclrtMemcpy(Async), aclrtMemset and aclrtFree rules"},
        {"runtime", "aclFinalize after the checks"},
    };
    const auto groups = report.groups();
    for (const auto& entry : kDescriptions) {
        const std::string name = entry.first, description = entry.second;
        const auto group =
            std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.name == name; });
        if (group == groups.end() || std::find(names.begin(), names.end(), name) == names.end()) continue;
        out << "\n" << name << ": " << description << "\n";
        char line[256];
        std::snprintf(line, sizeof line, "  %-48s %7s %7s %7s %7s\n", "op", "cases", "passed", "refused",
                      "failed");
        out << line;
        for (const auto& [op, tally] : group->ops) {
            std::snprintf(line, sizeof line, "  %-48s %7d %7d %7d %7d\n", op.c_str(),
                          tally.passed + tally.refused + tally.failed, tally.passed, tally.refused,
                          tally.failed);
            out << line;
        }
        for (const auto& [op, tally] : group->ops) {
            const size_t shown_failures =
                verbose ? tally.failures.size() : std::min<size_t>(tally.failures.size(), 10);
            for (size_t i = 0; i < shown_failures; ++i)
                out << "  FAIL " << name << " " << op << " " << tally.failures[i] << "\n";
            if (shown_failures < tally.failures.size())
                out << "  ... and " << tally.failures.size() - shown_failures << " more failures of " << op
                    << " (--verbose lists them)\n";
            const size_t shown_refusals =
                verbose ? tally.refusals.size() : std::min<size_t>(tally.refusals.size(), 3);
            for (size_t i = 0; i < shown_refusals; ++i)
                out << "  refused " << name << " " << op << " " << tally.refusals[i] << "\n";
            if (shown_refusals < tally.refusals.size())
                out << "  ... and " << tally.refusals.size() - shown_refusals << " more refusals of " << op
                    << "\n";
        }
    }
}

// What every child needs: the config it loads the plugin with, the options, and where the
// plugin's own output is shown.
struct Isolation {
    const ScratchConfig& config;
    const KitOptions& options;
    std::ostream& out;
};

// The plugin's own output from a child, each line escaped behind a prefix, so that it can
// neither start a line of the kit's nor pass for one. Bounded: at most kShownLines lines
// (all that was read with --verbose), each cut at kShownLineBytes, and no more than the
// child's first kOutputKept bytes; what is left out is counted.
void show_plugin_output(const Isolation& isolation, const ChildOutcome& outcome) {
    constexpr size_t kShownLines = 20;
    constexpr size_t kShownLineBytes = 1024;
    const std::string& output = outcome.output;
    size_t shown = 0, lines = 0;
    for (size_t start = 0; start < output.size();) {
        const size_t end = std::min(output.find('\n', start), output.size());
        ++lines;
        if (shown < kShownLines || isolation.options.verbose) {
            const size_t length = end - start, kept = std::min(length, kShownLineBytes);
            isolation.out << "  plugin output| " << escaped(output.substr(start, kept));
            if (kept < length) isolation.out << " ... (" << length - kept << " more bytes of this line)";
            isolation.out << "\n";
            ++shown;
        }
        start = end + 1;
    }
    if (shown < lines)
        isolation.out << "  plugin output| ... " << lines - shown << " more lines (--verbose)\n";
    if (outcome.output_bytes > output.size())
        isolation.out << "  plugin output| ... " << outcome.output_bytes
                      << " bytes in all; the kit read the first " << output.size() << "\n";
}

// A failure for the processes the plugin started and left running when its child ended.
void report_leftovers(const ChildOutcome& outcome, KitContext& kit, const std::string& group,
                      const std::string& op) {
    if (outcome.leftovers == 0) return;
    kit.report.fail(group, op, "leftover_processes",
                    "the plugin left " + std::to_string(outcome.leftovers) + " process" +
                        (outcome.leftovers == 1 ? "" : "es") +
                        " running when the kit's child ended; the kit killed " +
                        (outcome.leftovers == 1 ? "it" : "them"));
}

// aclInit and aclrtSetDevice in a child; "" or why not (escaped).
std::string start_runtime(const Isolation& isolation) {
    if (aclInit(isolation.config.file().c_str()) != ACL_SUCCESS) return escaped(aclGetRecentErrMsg());
    if (aclrtSetDevice(0) != ACL_SUCCESS) {
        std::string why = "aclrtSetDevice(0) failed: " + escaped(aclGetRecentErrMsg());
        aclFinalize();
        return why;
    }
    return {};
}

// Runs body on a fresh runtime in a child: its outcomes join kit.report; a crash, an exit
// or a hang is a failure of the case it was running (or of the group's set-up).
void run_in_child(const Isolation& isolation, KitContext& kit, const char* group, const std::string& op,
                  const std::function<void(KitContext&)>& body) {
    const ChildOutcome outcome = run_isolated(
        [&](int records) {
            Report report;
            report.record_to(records);
            KitContext child{report, kit.seed, kit.quick, kit.threads, kit.golden, kit.class_golden};
            if (const std::string why = start_runtime(isolation); !why.empty()) {
                report.fail(group, op, "set-up", "the runtime did not start: " + why);
                return 1;
            }
            body(child);
            if (aclFinalize() != ACL_SUCCESS)
                report.fail("runtime", "aclFinalize", "finalize", aclGetRecentErrMsg());
            return 0;
        },
        isolation.options.case_timeout);
    for (size_t start = 0; start < outcome.records.size();) {
        const size_t end = std::min(outcome.records.find('\n', start), outcome.records.size());
        kit.report.replay(outcome.records.substr(start, end - start));
        start = end + 1;
    }
    show_plugin_output(isolation, outcome);
    report_leftovers(outcome, kit, group, op);
    if (outcome.end == ChildOutcome::End::kFinished && outcome.code != 2) return;
    if (outcome.end == ChildOutcome::End::kFinished) {  // an exception escaped the group
        kit.report.fail(group, op, "set-up", "the kit's child failed (its output is above)");
        return;
    }
    const bool started = !outcome.name.empty();
    kit.report.fail(started ? outcome.group : group, started ? escaped(outcome.op) : op,
                    started ? escaped(outcome.name) : "set-up",
                    describe_end(outcome, isolation.options.case_timeout) +
                        "; the rest of this group for this op did not run");
}

// What the probe child found: why the plugin did not load, or its SoC and, per op, "" when
// it serves it or why not (escaped).
struct ProbeResult {
    std::string load_error;
    std::string soc;
    std::map<std::string, std::string> served;
};

ProbeResult probe_plugin(const Isolation& isolation, KitContext& kit) {
    ProbeResult result;
    const ChildOutcome outcome = run_isolated(
        [&](int records) {
            std::string text;
            if (const std::string why = start_runtime(isolation); !why.empty()) {
                text = "E\t" + why + "\n";
            } else {
                text = "C\t" + escaped(aclrtGetSocName() ? aclrtGetSocName() : "(none)") + "\n";
                for (const OpUnderTest& op : all_ops()) {
                    running("ops", op.api, "served");
                    std::string why_not;
                    const bool yes = serves(op, why_not);
                    text += std::string("S\t") + op.api + "\t" + (yes ? "" : escaped(why_not)) + "\n";
                    (void)!write(records, text.data(), text.size());
                    text.clear();
                }
                aclFinalize();
            }
            (void)!write(records, text.data(), text.size());
            return 0;
        },
        isolation.options.case_timeout);
    for (size_t start = 0; start < outcome.records.size();) {
        const size_t end = std::min(outcome.records.find('\n', start), outcome.records.size());
        const std::string line = outcome.records.substr(start, end - start);
        start = end + 1;
        const size_t tab = line.find('\t'), second = line.find('\t', tab + 1);
        if (line.rfind("E\t", 0) == 0) result.load_error = line.substr(2);
        if (line.rfind("C\t", 0) == 0) result.soc = line.substr(2);
        if (line.rfind("S\t", 0) == 0 && second != std::string::npos)
            result.served[line.substr(tab + 1, second - tab - 1)] = line.substr(second + 1);
    }
    show_plugin_output(isolation, outcome);
    report_leftovers(outcome, kit, "ops", "set-up");
    if (outcome.end != ChildOutcome::End::kFinished)
        kit.report.fail("ops", outcome.name.empty() ? "set-up" : escaped(outcome.op), "served",
                        describe_end(outcome, isolation.options.case_timeout));
    return result;
}

// Exit code 2 (with a line each) for unknown groups or ops asked for, else 0.
int check_names(const KitOptions& options, std::ostream& out) {
    int exit_code = 0;
    for (const std::string& group : options.groups) {
        static const char* const kGroups[] = {kGroupGolden,      kGroupRandom,   kGroupErrors,
                                              kGroupConcurrency, kGroupRefusals, kGroupMemory};
        if (std::none_of(std::begin(kGroups), std::end(kGroups), [&](const char* g) { return group == g; })) {
            out << "nnplug conformance: unknown group '" << escaped(group)
                << "' (golden, random, errors, concurrency, refusals, memory)\n";
            exit_code = 2;
        }
    }
    for (const std::string& name : options.ops) {
        const bool known = std::any_of(all_ops().begin(), all_ops().end(), [&](const OpUnderTest& op) {
            return name == op.api || name == op.name;
        });
        if (!known) {
            out << "nnplug conformance: unknown op '" << escaped(name) << "'\n";
            exit_code = 2;
        }
    }
    return exit_code;
}

// The golden cases of data_dir into kit.golden; false, with a line on out, when they cannot
// be read or there are none.
bool load_golden_cases(const std::string& data_dir, KitContext& kit, std::ostream& out) {
    try {
        kit.golden = load_golden_folder(data_dir);
        for (const auto& entry : fs::directory_iterator(data_dir)) {
            const std::string file = entry.path().string();
            const std::string suffix = "_golden.cases";
            if (file.size() < suffix.size() ||
                file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
                continue;
            auto more = load_class_golden_cases(file);
            kit.class_golden.insert(kit.class_golden.end(), more.begin(), more.end());
        }
    } catch (const std::exception& error) {
        out << "nnplug conformance: cannot read the golden cases in '" << data_dir << "': " << error.what()
            << " (--data names the folder)\n";
        return false;
    }
    if (kit.golden.empty()) {
        out << "nnplug conformance: no *_golden.txt files in '" << data_dir
            << "' (--data names the folder)\n";
        return false;
    }
    return true;
}

// The ops to check: those asked for (all with --every-op), else every op of the catalog the
// plugin serves. An op asked for that the plugin does not serve is a failure; one not asked
// for is skipped.
std::vector<const OpUnderTest*> select_ops(const KitOptions& options, const ProbeResult& probe,
                                           KitContext& kit, std::ostream& out) {
    std::vector<const OpUnderTest*> ops;
    for (const OpUnderTest& op : all_ops()) {
        const bool asked = options.every_op ||
                           std::find(options.ops.begin(), options.ops.end(), op.api) != options.ops.end() ||
                           std::find(options.ops.begin(), options.ops.end(), op.name) != options.ops.end();
        if (!options.ops.empty() && !asked) continue;
        const auto served = probe.served.find(op.api);
        if (served == probe.served.end()) continue;  // the probe did not get to it: reported as its failure
        if (served->second.empty()) {
            ops.push_back(&op);
        } else if (asked) {
            kit.report.fail("ops", op.api, "served", "the plugin does not serve it: " + served->second);
        } else {
            out << "  " << op.api << ": not served by the plugin, skipped\n";
        }
    }
    return ops;
}

// Group after group, each op's part in a child process, each group printed when it is done.
void run_groups(const Isolation& isolation, KitContext& kit, const std::vector<const OpUnderTest*>& ops) {
    const KitOptions& options = isolation.options;
    const auto wanted = [&](const char* group) {
        return options.groups.empty() ||
               std::find(options.groups.begin(), options.groups.end(), group) != options.groups.end();
    };
    const auto print = [&](const std::vector<std::string>& names) {
        print_groups(kit.report, isolation.out, options.verbose, names);
        isolation.out << std::flush;
    };
    print({"ops"});
    const std::pair<const char*, void (*)(KitContext&, const OpUnderTest&)> per_op[] = {
        {kGroupGolden, run_golden_group},    {kGroupRandom, run_random_group},
        {kGroupErrors, run_error_group},     {kGroupConcurrency, run_concurrency_group},
        {kGroupRefusals, run_refusal_group},
    };
    // The ops with a class axis run their folders' cases.
    const std::pair<const char*, void (*)(KitContext&, const OpUnderTest&)> per_class_op[] = {
        {kGroupGolden, run_class_golden_group},    {kGroupRandom, run_class_random_group},
        {kGroupErrors, run_class_error_group},     {kGroupConcurrency, run_class_concurrency_group},
        {kGroupRefusals, run_class_refusal_group},
    };
    for (size_t g = 0; g < std::size(per_op); ++g) {
        const auto& [group, run] = per_op[g];
        if (!wanted(group)) continue;
        const bool random = std::string(group) == kGroupRandom;
        for (const OpUnderTest* op : ops) {
            const auto class_run = per_class_op[g].second;
            if (op->class_kit != nullptr && class_run == nullptr) continue;
            run_in_child(isolation, kit, group, op->api, [&, run = run, class_run](KitContext& child) {
                if (op->class_kit != nullptr) return class_run(child, *op);
                run(child, *op);
                if (!random) return;
                run_large_offset_case(child, *op);
                run_finite_differences(child, *op);
            });
        }
        if (std::string(group) == kGroupRandom)
            print({kGroupRandom, kGroupUntouched, kGroupRepeat});
        else
            print({group});
    }
    if (!ops.empty() && wanted(kGroupMemory)) {
        run_in_child(isolation, kit, kGroupMemory, "device", run_memory_group);
        print({kGroupMemory});
    }
    print({"runtime"});
}

// The closing line with the counts of every group; the exit code: that of a bad request,
// else 1 when a case failed.
int print_summary(const KitOptions& options, const Report& report, size_t ops, int exit_code,
                  std::chrono::steady_clock::time_point start, std::ostream& out) {
    int passed = 0, refused = 0, failed = 0;
    for (const auto& group : report.groups())
        for (const auto& [op, tally] : group.ops) {
            passed += tally.passed;
            refused += tally.refused;
            failed += tally.failed;
        }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = failed == 0 && exit_code == 0;
    out << "\nconformance of " << brief(options.plugin) << ": " << (ok ? "PASS" : "FAIL") << ", " << ops
        << " ops, " << passed + refused + failed << " cases: " << passed << " passed, " << refused
        << " refused, " << failed << " failed in " << seconds(elapsed) << "\n";
    if (exit_code != 0) return exit_code;
    return failed == 0 ? 0 : 1;
}

}  // namespace

std::string default_data_dir() {
    std::error_code failure;
    const fs::path program = fs::read_symlink("/proc/self/exe", failure);
    if (failure) return "share/nnplug/conformance";
    return (program.parent_path().parent_path() / "share" / "nnplug" / "conformance").string();
}

int run_kit(const KitOptions& options, std::ostream& out) {
    const auto start = std::chrono::steady_clock::now();
    // Written so that NaN, which no elapsed time exceeds, is refused too.
    if (!(options.case_timeout >= kMinCaseTimeout && options.case_timeout <= kMaxCaseTimeout)) {
        out << "nnplug conformance: a case timeout of " << options.case_timeout
            << " s is refused; it is from " << kMinCaseTimeout << " to " << kMaxCaseTimeout << " s\n";
        return 2;
    }
    const std::string data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
    Report report;
    KitContext kit{report, options.seed, options.quick, options.threads, {}, {}};
    if (!load_golden_cases(data_dir, kit, out)) return 2;

    std::unique_ptr<ScratchConfig> config;
    try {
        config = std::make_unique<ScratchConfig>(options);
    } catch (const std::exception& error) {
        out << "nnplug conformance: " << escaped(error.what()) << "\n";
        return 2;
    }
    // The generated config alone decides the backend.
    unsetenv("NNPLUG_BACKEND");
    unsetenv("NNPLUG_CONFIG");
    Isolation isolation{*config, options, out};

    const ProbeResult probe = probe_plugin(isolation, kit);
    if (!probe.load_error.empty()) {
        out << "nnplug conformance: plugin '" << brief(options.plugin)
            << "' did not load: " << probe.load_error << "\n";
        return 2;
    }
    out << "nnplug conformance: plugin " << brief(options.plugin) << " (SoC " << probe.soc << "), "
        << kit.golden.size() << " golden cases from " << escaped(data_dir) << (options.quick ? ", quick" : "")
        << ", seed " << options.seed << "\n";
    const std::vector<const OpUnderTest*> ops = select_ops(options, probe, kit, out);
    int exit_code = check_names(options, out);
    if (ops.empty() && exit_code == 0) {
        out << "nnplug conformance: the plugin serves none of the ops asked for\n";
        exit_code = 1;
    }
    run_groups(isolation, kit, ops);
    return print_summary(options, kit.report, ops.size(), exit_code, start, out);
}

}  // namespace nnplug::conformance
