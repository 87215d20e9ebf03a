// The kit's report, a case uploaded and run through the public API, and the groups that run
// cases: golden, random (with untouched storage and repeated runs), concurrency.
#include <nnplug/escaped_text.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "isolated_run.h"
#include "kit_internal.h"

namespace nnplug::conformance {

// ---- Report -------------------------------------------------------------------------------

Report::Tally& Report::tally(const std::string& group, const std::string& op) {
    auto group_at =
        std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.name == group; });
    if (group_at == groups_.end()) group_at = groups_.insert(groups_.end(), Group{group, {}});
    auto& ops = group_at->ops;
    auto op_at = std::find_if(ops.begin(), ops.end(), [&](const auto& entry) { return entry.first == op; });
    if (op_at == ops.end()) op_at = ops.insert(ops.end(), {op, Tally{}});
    return op_at->second;
}

// One outcome as a line of tab-separated escaped fields: kind, group, op, name, message.
void Report::record(char kind, const std::string& group, const std::string& op, const std::string& name,
                    const std::string& message) {
    if (record_fd_ < 0) return;
    const std::string line = std::string(1, kind) + "\t" + escaped(group) + "\t" + escaped(op) + "\t" +
                             escaped(name) + "\t" + escaped(message) + "\n";
    for (size_t written = 0; written < line.size();) {
        const ssize_t now = write(record_fd_, line.data() + written, line.size() - written);
        if (now <= 0) return;
        written += static_cast<size_t>(now);
    }
}

bool Report::replay(const std::string& line) {
    std::vector<std::string> fields;
    for (size_t start = 0;;) {
        const size_t tab = line.find('\t', start);
        fields.push_back(line.substr(start, tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
    }
    if (fields.size() != 5 || fields[0].size() != 1) return false;
    if (fields[0] == "P")
        pass(fields[1], fields[2]);
    else if (fields[0] == "R")
        refuse(fields[1], fields[2], fields[3], fields[4]);
    else if (fields[0] == "F")
        fail(fields[1], fields[2], fields[3], fields[4]);
    else
        return false;
    return true;
}

void Report::pass(const std::string& group, const std::string& op) {
    std::lock_guard lock(mutex_);
    ++tally(group, op).passed;
    record('P', group, op, "", "");
}

void Report::refuse(const std::string& group, const std::string& op, const std::string& name,
                    const std::string& message) {
    std::lock_guard lock(mutex_);
    Tally& entry = tally(group, op);
    ++entry.refused;
    entry.refusals.push_back(name + ": " + message);
    record('R', group, op, name, message);
}

void Report::fail(const std::string& group, const std::string& op, const std::string& name,
                  const std::string& message) {
    std::lock_guard lock(mutex_);
    Tally& entry = tally(group, op);
    ++entry.failed;
    entry.failures.push_back(name + ": " + message);
    record('F', group, op, name, message);
}

std::vector<Report::Group> Report::groups() const {
    std::lock_guard lock(mutex_);
    return groups_;
}

// ---- UploadedCase ---------------------------------------------------------------------------

UploadedCase::UploadedCase(const GoldenCase& golden)
    : golden_(golden), op_(op_named(golden.op)), operands_(upload_operands(golden)) {
    if (operands_.output == nullptr) throw std::runtime_error("case " + golden.name + " has no output");
}

void UploadedCase::reset_output() const {
    operands_.output->upload(golden_.tensors.at(op_.output).storage);
}

aclnnStatus UploadedCase::first_phase(uint64_t* workspace, aclOpExecutor** executor) const {
    return op_.first_phase(operands_.arguments, golden_.attrs, workspace, executor);
}

aclnnStatus UploadedCase::run(aclrtStream stream, std::string& message) const {
    const aclnnStatus status = run_op(op_, operands_.arguments, golden_.attrs, stream);
    if (status != ACLNN_SUCCESS) message = aclGetRecentErrMsg();
    return status;
}

std::vector<uint8_t> UploadedCase::output() const {
    return operands_.output->storage_bytes();
}

void* UploadedCase::data_of(size_t argument) const {
    for (const auto& tensor : operands_.tensors)
        if (tensor->get() == operands_.arguments.at(argument)) return tensor->data();
    return nullptr;
}

std::vector<std::vector<uint8_t>> UploadedCase::inputs() const {
    std::vector<std::vector<uint8_t>> result;
    for (const DeviceTensor* input : operands_.inputs) result.push_back(input->storage_bytes());
    return result;
}

std::vector<std::vector<uint8_t>> UploadedCase::poison_inputs() const {
    std::vector<std::vector<uint8_t>> held = inputs();
    for (size_t k = 0; k < held.size(); ++k)
        operands_.inputs[k]->upload(std::vector<uint8_t>(held[k].size(), 0xFF));
    return held;
}

void UploadedCase::restore_inputs(const std::vector<std::vector<uint8_t>>& held) const {
    for (size_t k = 0; k < held.size(); ++k) operands_.inputs[k]->upload(held[k]);
}

std::string refusal_fault(const OpUnderTest& op, aclnnStatus status, const std::string& message) {
    if (status != ACLNN_ERR_PARAM_INVALID)
        return "a valid call failed its first phase with status " + std::to_string(status) +
               " (a refusal is " + std::to_string(ACLNN_ERR_PARAM_INVALID) + "): " + message;
    if (message.find('\n') != std::string::npos) return "the refusal's message is not one line: " + message;
    const std::string prefix = std::string(op.api) + ": ";
    if (message.rfind(prefix, 0) != 0 || message.size() <= prefix.size() + 3)
        return "the refusal's message does not give the op and a reason: '" + message + "'";
    return "";
}

namespace {

// Runs one case and sorts it: a refusal at the first phase (checked), a failure, or its
// output; returns true with the output when the case ran.
bool run_and_sort(Report& report, const char* group, const OpUnderTest& op, const GoldenCase& golden,
                  std::vector<uint8_t>& output, const UploadedCase* uploaded = nullptr) {
    std::unique_ptr<UploadedCase> own;
    try {
        if (uploaded == nullptr) {
            own = std::make_unique<UploadedCase>(golden);
            uploaded = own.get();
        }
    } catch (const std::exception& error) {
        report.fail(group, op.api, golden.name, error.what());
        return false;
    }
    running(group, op.api, golden.name);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = uploaded->first_phase(&workspace, &executor);
    if (first != ACLNN_SUCCESS) {
        const std::string message = aclGetRecentErrMsg();
        std::string fault = refusal_fault(op, first, message);
        if (fault.empty() && executor != nullptr) fault = "a refused call handed out an executor";
        if (fault.empty() && uploaded->output() != golden.tensors.at(op.output).storage)
            fault = "a refused call wrote into its output";
        if (fault.empty())
            report.refuse(group, op.api, golden.name, message);
        else
            report.fail(group, op.api, golden.name, fault);
        return false;
    }
    aclDestroyAclOpExecutor(executor);
    std::string message;
    if (uploaded->run(nullptr, message) != ACLNN_SUCCESS) {
        report.fail(group, op.api, golden.name,
                    "the call failed after its first phase succeeded: " + message);
        return false;
    }
    output = uploaded->output();
    return true;
}

std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size()) return "the output has another size";
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) return "byte " + std::to_string(i) + " of the output's storage differs";
    return "";
}

}  // namespace

// ---- Groups -----------------------------------------------------------------------------------

void run_golden_group(KitContext& kit, const OpUnderTest& op) {
    for (const GoldenCase& golden : kit.golden) {
        if (golden.op != op.name) continue;
        GoldenRun run;
        if (!run_and_sort(kit.report, kGroupGolden, op, golden, run.output)) continue;
        const std::string fault = check_golden_run(golden, run);
        if (fault.empty())
            kit.report.pass(kGroupGolden, op.api);
        else
            kit.report.fail(kGroupGolden, op.api, golden.name, fault);
    }
}

namespace {

// Points every present argument of the executor (the aclTensors of `given`, its first
// phase's) at `to`'s memory; the index of the first refusal, or -1.
int move_arguments(aclOpExecutor* executor, const UploadedCase& given, const UploadedCase& to) {
    const auto& arguments = given.arguments();
    for (size_t k = 0; k < arguments.size(); ++k)
        if (arguments[k] != nullptr && aclSetTensorAddr(executor, k, const_cast<aclTensor*>(arguments[k]),
                                                        to.data_of(k)) != ACLNN_SUCCESS)
            return static_cast<int>(k);
    return -1;
}

// A repeatable executor moved by aclSetTensorAddr to a second copy of the case's operands
// must give the first run's bits there and leave the first copy's output alone; it is moved
// back after. The first copy's inputs hold other bytes meanwhile, so that a plan that kept
// their addresses reads something else.
std::string moved_fault(const OpUnderTest& op, const GoldenCase& golden, const UploadedCase& uploaded,
                        aclOpExecutor* executor, void* workspace, uint64_t workspace_size,
                        const std::vector<uint8_t>& output) {
    const UploadedCase moved(golden);
    uploaded.reset_output();
    const std::vector<uint8_t> untouched = uploaded.output();
    struct Poisoned {  // restored however the check ends
        const UploadedCase& uploaded;
        const std::vector<std::vector<uint8_t>> held = uploaded.poison_inputs();
        ~Poisoned() { uploaded.restore_inputs(held); }
    } poisoned{uploaded};
    std::string fault;
    if (const int refused = move_arguments(executor, uploaded, moved); refused >= 0)
        fault = "aclSetTensorAddr refused tensor " + std::to_string(refused) + ": " + aclGetRecentErrMsg();
    else if (op.second_phase(workspace, workspace_size, executor, nullptr) != ACLNN_SUCCESS ||
             aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
        fault =
            std::string("the run of an executor moved by aclSetTensorAddr failed: ") + aclGetRecentErrMsg();
    else if (const auto diff = first_difference(moved.output(), output); !diff.empty())
        fault = "an executor moved by aclSetTensorAddr: " + diff;
    else if (const auto wrote = first_difference(uploaded.output(), untouched); !wrote.empty())
        fault = "an executor moved by aclSetTensorAddr wrote its old output: " + wrote;
    if (move_arguments(executor, uploaded, uploaded) >= 0 && fault.empty())
        fault = std::string("aclSetTensorAddr refused the way back: ") + aclGetRecentErrMsg();
    return fault;
}

// One repeatable executor run three times, then moved to other memory and run there, and
// a fresh one, each from the same starting storage, give the same bits.
std::string repeat_fault(const OpUnderTest& op, const GoldenCase& golden, const UploadedCase& uploaded,
                         const std::vector<uint8_t>& output) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    if (uploaded.first_phase(&workspace_size, &executor) != ACLNN_SUCCESS ||
        aclSetAclOpExecutorRepeatable(executor) != ACLNN_SUCCESS)
        return std::string("a repeatable executor could not be made: ") + aclGetRecentErrMsg();
    std::string repeat;
    void* workspace = nullptr;
    if (workspace_size > 0) aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
    for (int run = 0; run < 3 && repeat.empty(); ++run) {
        uploaded.reset_output();
        if (op.second_phase(workspace, workspace_size, executor, nullptr) != ACLNN_SUCCESS ||
            aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
            repeat = "run " + std::to_string(run + 1) +
                     " of a repeatable executor failed: " + aclGetRecentErrMsg();
        else if (const auto diff = first_difference(uploaded.output(), output); !diff.empty())
            repeat = "run " + std::to_string(run + 1) + " of a repeatable executor: " + diff;
    }
    if (repeat.empty())
        repeat = moved_fault(op, golden, uploaded, executor, workspace, workspace_size, output);
    aclDestroyAclOpExecutor(executor);
    if (workspace != nullptr) aclrtFree(workspace);
    std::string message;
    uploaded.reset_output();
    if (repeat.empty() && uploaded.run(nullptr, message) != ACLNN_SUCCESS)
        return "a fresh run failed: " + message;
    if (repeat.empty())
        if (const auto diff = first_difference(uploaded.output(), output); !diff.empty())
            return "a fresh executor: " + diff;
    return repeat;
}

}  // namespace

void run_random_group(KitContext& kit, const OpUnderTest& op) {
    const auto cases = random_cases(op, kit.seed, kit.quick);
    for (size_t i = 0; i < cases.size(); ++i) {
        const RandomCase& c = cases[i];
        std::unique_ptr<UploadedCase> uploaded;
        try {
            uploaded = std::make_unique<UploadedCase>(c.golden);
        } catch (const std::exception& error) {
            kit.report.fail(kGroupRandom, op.api, c.golden.name, error.what());
            continue;
        }
        const auto inputs_before = uploaded->inputs();
        std::vector<uint8_t> output;
        if (!run_and_sort(kit.report, kGroupRandom, op, c.golden, output, uploaded.get())) continue;
        const std::string fault = check_random_run(op, c, output);
        // (check_random_run also checks the storage around the view; the untouched group
        // reports that separately, with the inputs.)
        if (fault.empty() || fault.rfind("storage element", 0) == 0)
            kit.report.pass(kGroupRandom, op.api);
        else
            kit.report.fail(kGroupRandom, op.api, c.golden.name, fault);

        std::string untouched = fault.rfind("storage element", 0) == 0 ? fault : "";
        const auto inputs_after = uploaded->inputs();
        for (size_t k = 0; k < inputs_after.size() && untouched.empty(); ++k)
            if (inputs_after[k] != inputs_before[k])
                untouched = "an input's storage was written (" +
                            first_difference(inputs_after[k], inputs_before[k]) + ")";
        if (untouched.empty())
            kit.report.pass(kGroupUntouched, op.api);
        else
            kit.report.fail(kGroupUntouched, op.api, c.golden.name, untouched);

        // Repeated runs: every fourth case.
        if (i % 4 != 0) continue;
        running(kGroupRepeat, op.api, c.golden.name);
        const std::string repeat = repeat_fault(op, c.golden, *uploaded, output);
        if (repeat.empty())
            kit.report.pass(kGroupRepeat, op.api);
        else
            kit.report.fail(kGroupRepeat, op.api, c.golden.name, repeat);
    }
    for (const ProbedCase& c : probed_cases(op, kit.seed)) {
        std::vector<uint8_t> probed, output;
        if (!run_and_sort(kit.report, kGroupRandom, op, c.probe, probed) ||
            !run_and_sort(kit.report, kGroupRandom, op, c.golden, output))
            continue;
        if (const std::string fault = check_probed_run(op, c, probed, output); fault.empty())
            kit.report.pass(kGroupRandom, op.api);
        else
            kit.report.fail(kGroupRandom, op.api, c.golden.name, fault);
    }
}

namespace {

// The concurrency group's cases of one op, uploaded, with the bits each gives run alone.
struct ConcurrencyCases {
    const OpUnderTest& op;
    unsigned threads;
    int runs;
    std::string dims;
    std::vector<RandomCase> cases;
    std::vector<std::unique_ptr<UploadedCase>> uploaded;
    std::vector<std::vector<uint8_t>> baseline;
};

void record(KitContext& kit, const OpUnderTest& op, const std::string& name, const std::string& fault) {
    if (fault.empty())
        kit.report.pass(kGroupConcurrency, op.api);
    else
        kit.report.fail(kGroupConcurrency, op.api, name, fault);
}

// Sequential runs first: each thread's data on its own gives the bits every later run must
// give. False (reported) when one fails.
bool run_sequentially(KitContext& kit, ConcurrencyCases& c) {
    for (unsigned t = 0; t < c.threads; ++t) {
        c.uploaded.push_back(std::make_unique<UploadedCase>(c.cases[t].golden));
        if (!run_and_sort(kit.report, kGroupConcurrency, c.op, c.cases[t].golden, c.baseline[t],
                          c.uploaded[t].get()))
            return false;
        if (const auto fault = check_random_run(c.op, c.cases[t], c.baseline[t]); !fault.empty()) {
            kit.report.fail(kGroupConcurrency, c.op.api, "sequential_" + c.dims, fault);
            return false;
        }
    }
    return true;
}

// Thread t's part of the threaded case: its own stream, started when every thread has one,
// then its runs, each compared with the sequential bits; "" or what broke.
std::string run_on_thread(const ConcurrencyCases& c, unsigned t, std::atomic<unsigned>& ready) {
    std::string fault;
    aclrtStream stream = nullptr;
    if (aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS) {
        fault = std::string("a stream could not be made: ") + aclGetRecentErrMsg();
        ++ready;
        return fault;
    }
    ++ready;
    while (ready.load() < c.threads) std::this_thread::yield();
    for (int run = 0; run < c.runs && fault.empty(); ++run) {
        c.uploaded[t]->reset_output();
        std::string message;
        if (c.uploaded[t]->run(stream, message) != ACLNN_SUCCESS)
            fault = "thread " + std::to_string(t) + " run " + std::to_string(run + 1) + " failed: " + message;
        else if (const auto diff = first_difference(c.uploaded[t]->output(), c.baseline[t]); !diff.empty())
            fault = "thread " + std::to_string(t) + " run " + std::to_string(run + 1) +
                    " differs from the same call run alone: " + diff;
    }
    aclrtDestroyStream(stream);
    return fault;
}

// Several host threads, each on its own stream and data, launching at once.
void check_threads(KitContext& kit, const ConcurrencyCases& c) {
    const std::string name =
        "threads_" + std::to_string(c.threads) + "x" + std::to_string(c.runs) + "_" + c.dims;
    running(kGroupConcurrency, c.op.api, name);
    std::vector<std::string> faults(c.threads);
    std::atomic<unsigned> ready{0};
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < c.threads; ++t)
        workers.emplace_back([&, t] { faults[t] = run_on_thread(c, t, ready); });
    for (auto& worker : workers) worker.join();
    std::string fault;
    for (const auto& f : faults)
        if (fault.empty()) fault = f;
    record(kit, c.op, name, fault);
}

// One host thread launching on several streams before synchronizing any.
void check_streams(KitContext& kit, const ConcurrencyCases& c) {
    const std::string name = "streams_" + std::to_string(c.threads) + "_" + c.dims;
    running(kGroupConcurrency, c.op.api, name);
    std::string fault;
    std::vector<aclrtStream> streams(c.threads, nullptr);
    std::vector<void*> workspaces(c.threads, nullptr);
    for (unsigned t = 0; t < c.threads && fault.empty(); ++t) {
        c.uploaded[t]->reset_output();
        uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        if (aclrtCreateStream(&streams[t]) != ACL_SUCCESS ||
            c.uploaded[t]->first_phase(&workspace_size, &executor) != ACLNN_SUCCESS) {
            fault = std::string("stream ") + std::to_string(t) + ": " + aclGetRecentErrMsg();
            break;
        }
        if (workspace_size > 0) aclrtMalloc(&workspaces[t], workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
        if (c.op.second_phase(workspaces[t], workspace_size, executor, streams[t]) != ACLNN_SUCCESS)
            fault =
                std::string("the launch on stream ") + std::to_string(t) + " failed: " + aclGetRecentErrMsg();
    }
    for (unsigned t = 0; t < c.threads; ++t) {
        if (streams[t] == nullptr) continue;
        if (aclrtSynchronizeStream(streams[t]) != ACL_SUCCESS && fault.empty())
            fault = std::string("stream ") + std::to_string(t) + " failed: " + aclGetRecentErrMsg();
        if (fault.empty())
            if (const auto diff = first_difference(c.uploaded[t]->output(), c.baseline[t]); !diff.empty())
                fault = "stream " + std::to_string(t) + " differs from the same call run alone: " + diff;
        aclrtDestroyStream(streams[t]);
        if (workspaces[t] != nullptr) aclrtFree(workspaces[t]);
    }
    record(kit, c.op, name, fault);
}

}  // namespace

void run_concurrency_group(KitContext& kit, const OpUnderTest& op) {
    const std::vector<int64_t> shape =
        kit.quick ? std::vector<int64_t>{16, 1000} : std::vector<int64_t>{64, 2048};
    const unsigned threads = std::max(2u, kit.threads);
    ConcurrencyCases c{op,
                       threads,
                       kit.quick ? 4 : 8,
                       std::to_string(shape[0]) + "x" + std::to_string(shape[1]),
                       {},
                       {},
                       std::vector<std::vector<uint8_t>>(threads)};
    for (unsigned t = 0; t < threads; ++t)
        c.cases.push_back(concurrency_case(op, kit.seed + 1000 + t, shape));
    if (!run_sequentially(kit, c)) return;
    check_threads(kit, c);
    check_streams(kit, c);
}

}  // namespace nnplug::conformance
