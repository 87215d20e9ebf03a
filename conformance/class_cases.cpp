// The kit's cases of the ops with a class axis: each op folder makes them (ClassKit in
// op_catalog.h) with their float64 expectations; this runs one on the backend under test and
// says how its outcome differs, and runs the groups over them. The first-phase errors are
// derived from the published schema (class_errors.cpp).
#include <nnplug/op_schema.h>
#include <nnplug/plugin.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "kit_internal.h"

namespace nnplug::conformance {
namespace {

// How run_class_case says that the backend refused a valid call, well-formed.
constexpr const char* kRefusedPrefix = "refused: ";

// The tolerance of a value computed in float32 and rounded once into dtype: relative, plus
// a floor for values near 0.
double tolerance(aclDataType dtype, double expected) {
    const double relative = dtype == ACL_FLOAT16 ? 0x1p-9 : dtype == ACL_BF16 ? 0x1p-6 : 2e-5;
    return relative * std::abs(expected) + (dtype == ACL_FLOAT ? 1e-6 : relative * 1e-2);
}

std::string number(double value) {
    std::ostringstream text;
    text.precision(9);
    text << value;
    return text.str();
}

// The case's tensors on the device; absent operands are null.
struct Uploaded {
    std::vector<std::unique_ptr<DeviceTensor>> tensors;
    std::vector<const aclTensor*> arguments;
    explicit Uploaded(const ClassCase& c) {
        for (const HostTensor& t : c.tensors) {
            tensors.push_back(t.present ? std::make_unique<DeviceTensor>(t.values, t.shape, t.dtype)
                                        : nullptr);
            arguments.push_back(t.present ? tensors.back()->get() : nullptr);
        }
    }
};

// Both phases and a synchronize; the message of the first failure in `message`, and
// whether it was the first phase that failed.
aclnnStatus run_call(const OpUnderTest& op, const Uploaded& uploaded, const ClassCase& c,
                     std::string& message, bool& first_failed, aclrtStream stream = nullptr) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        op.class_kit->first_phase(uploaded.arguments, c.attrs, &workspace_size, &executor);
    first_failed = first != ACLNN_SUCCESS;
    const aclnnStatus status = run_executor(first, workspace_size, executor, op.second_phase, stream);
    if (status != ACLNN_SUCCESS) message = aclGetRecentErrMsg();
    return status;
}

// Why output `slot` does not hold the expected values, or "".
std::string compare_output(const OpUnderTest& op, const ClassCase& c, const Uploaded& uploaded, size_t slot) {
    const std::vector<double>& want = c.expected[slot];
    const std::vector<float> got = uploaded.tensors[slot]->storage();
    if (got.size() < want.size()) return op.operands[slot] + " holds fewer elements than expected";
    const aclDataType dtype = c.tensors[slot].dtype;
    const double cancellation = slot < c.magnitude.size() ? 0x1p-21 * c.magnitude[slot] : 0.0;
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const bool nan_ok = std::isnan(want[i]) && std::isnan(got[i]);
        if (nan_ok || std::abs(got[i] - want[i]) <= tolerance(dtype, want[i]) + cancellation) continue;
        if (wrong++ == 0) first = i;
    }
    if (wrong == 0) return "";
    return op.operands[slot] + " element " + std::to_string(first) + " is " + number(got[first]) +
           ", expected " + number(want[first]) + " (" + std::to_string(wrong) + " of " +
           std::to_string(want.size()) + " elements differ)";
}

// Why a run the data makes invalid did not fail cleanly, or "".
std::string check_refused(const OpUnderTest& op, const ClassCase& c, const Uploaded& uploaded,
                          aclnnStatus status, const std::string& message) {
    if (status == ACLNN_SUCCESS) return "the call succeeded; expected it refused with \"" + c.refusal + "\"";
    if (message.find(c.refusal) == std::string::npos)
        return "refused with \"" + message + "\"; expected a message holding \"" + c.refusal + "\"";
    for (size_t slot = 0; slot < c.tensors.size(); ++slot) {
        if (!c.tensors[slot].present || c.expected[slot].empty()) continue;
        const std::vector<float> after = uploaded.tensors[slot]->storage();
        if (after != c.tensors[slot].values) return op.operands[slot] + " was written by the refused call";
    }
    return "";
}

}  // namespace

std::string run_class_case(const OpUnderTest& op, const ClassCase& c, aclrtStream stream) {
    const Uploaded uploaded(c);
    std::string message;
    bool first_failed = false;
    const aclnnStatus status = run_call(op, uploaded, c, message, first_failed, stream);
    // A call a backend refuses at the first phase (a dtype or an op its SoC lacks) is a
    // refusal, if it is well-formed: the data is not known there.
    if (first_failed && refusal_fault(op, status, message).empty()) return kRefusedPrefix + message;
    if (!c.refusal.empty()) return check_refused(op, c, uploaded, status, message);
    if (status != ACLNN_SUCCESS) return "status " + std::to_string(status) + ": " + message;
    for (size_t slot = 0; slot < c.expected.size(); ++slot) {
        if (c.expected[slot].empty()) continue;
        if (std::string why = compare_output(op, c, uploaded, slot); !why.empty()) return why;
    }
    return "";
}

std::string run_class_case_output(const OpUnderTest& op, const ClassCase& c, size_t slot,
                                  std::vector<float>& values) {
    const Uploaded uploaded(c);
    std::string message;
    bool first_failed = false;
    const aclnnStatus status = run_call(op, uploaded, c, message, first_failed);
    if (first_failed && refusal_fault(op, status, message).empty()) return kRefusedPrefix + message;
    if (status != ACLNN_SUCCESS) return message;
    values = uploaded.tensors.at(slot)->storage();
    return "";
}

namespace {

void record(KitContext& kit, const char* group, const OpUnderTest& op, const ClassCase& c) {
    running(group, op.api, c.name);
    const std::string why = run_class_case(op, c);
    if (why.empty())
        kit.report.pass(group, op.api);
    else if (why.rfind(kRefusedPrefix, 0) == 0)
        kit.report.refuse(group, op.api, c.name, why.substr(std::strlen(kRefusedPrefix)));
    else
        kit.report.fail(group, op.api, c.name, why);
}

const nnplug_op_schema* schema_of(const OpUnderTest& op) {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i)
        if (std::strcmp(nnplug_op_schema_at(i)->api, op.api) == 0) return nnplug_op_schema_at(i);
    return nullptr;
}

// Whether a case calls for a reduction (an int64 reduction not 0, a word not "none").
bool reduces(const nnplug_op_schema& schema, const ClassCase& c) {
    for (size_t a = 0; a < schema.attr_count && a < c.attrs.size(); ++a) {
        if (schema.attrs[a].key != NNPLUG_ATTR_REDUCTION) continue;
        const AttrArg& arg = c.attrs[a];
        return arg.type == NNPLUG_ATTR_ARG_REDUCTION_WORD ? arg.null_word || arg.word != "none" : arg.i != 0;
    }
    return false;
}

// The case the derived errors spoil: a reducing call with float32 self holding rows, every
// operand present if any case has them all.
const ClassCase* error_base(const nnplug_op_schema& schema, const std::vector<ClassCase>& cases) {
    const ClassCase* base = nullptr;
    for (const ClassCase& c : cases) {
        bool rows = false, all = true;
        for (size_t slot = 0; slot < schema.operand_count && slot < c.tensors.size(); ++slot) {
            const HostTensor& t = c.tensors[slot];
            if (schema.operands[slot].shape == NNPLUG_SHAPE_ITERATION)
                rows = t.dtype == ACL_FLOAT && t.shape.size() >= 2 && !t.values.empty() && t.shape[0] > 0;
            all = all && t.present;
        }
        if (!rows || !reduces(schema, c)) continue;
        if (all) return &c;
        if (base == nullptr) base = &c;
    }
    return base;
}

// A first phase that must fail with `status`, naming the op, handing out no executor.
void record_error(KitContext& kit, const OpUnderTest& op, const ClassErrorCase& error) {
    const ClassCase& c = error.c;
    const aclnnStatus status = error.status;
    running(kGroupErrors, op.api, c.name);
    const Uploaded uploaded(c);
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus got =
        op.class_kit->first_phase(uploaded.arguments, c.attrs, &workspace_size, &executor);
    const std::string message = aclGetRecentErrMsg();
    std::string why;
    if (got != status)
        why = "status " + std::to_string(got) + ", expected " + std::to_string(status) + ": " + message;
    else if (executor != nullptr)
        why = "an executor was handed out";
    else if (message.rfind(std::string(op.api) + ": ", 0) != 0)
        why = "the message does not start with the op's name: " + message;
    else if (message.find(error.fragment) == std::string::npos)
        why = "the message does not hold \"" + error.fragment + "\": " + message;
    if (executor != nullptr) aclDestroyAclOpExecutor(executor);
    if (why.empty())
        kit.report.pass(kGroupErrors, op.api);
    else
        kit.report.fail(kGroupErrors, op.api, c.name, why);
}

}  // namespace

void run_class_random_group(KitContext& kit, const OpUnderTest& op) {
    try {
        for (const ClassCase& c : op.class_kit->random(kit.seed, kit.quick)) record(kit, kGroupRandom, op, c);
        // A gradient the schema names (gradient_of) is checked against its loss's finite differences.
        const nnplug_op_schema* schema = schema_of(op);
        const bool gradient = schema != nullptr && schema->gradient_of >= 0;
        if (gradient != (op.class_kit->gradient_check != nullptr)) {
            kit.report.fail(
                kGroupRandom, op.api, "finite_differences",
                gradient ? "the schema names a loss this op is the gradient of, but its kit entry "
                           "has no finite differences"
                         : "the kit entry checks finite differences of an op the schema links to no loss");
            return;
        }
        if (!gradient) return;
        running(kGroupRandom, op.api, "finite_differences");
        std::string why;
        try {
            why = op.class_kit->gradient_check(kit.seed);
        } catch (const std::runtime_error& error) {
            why = error.what();
        }
        if (why.empty())
            kit.report.pass(kGroupRandom, op.api);
        else if (why.rfind(kRefusedPrefix, 0) == 0)
            kit.report.refuse(kGroupRandom, op.api, "finite_differences",
                              why.substr(std::strlen(kRefusedPrefix)));
        else
            kit.report.fail(kGroupRandom, op.api, "finite_differences", why);
    } catch (const std::exception& error) {
        kit.report.fail(kGroupRandom, op.api, "setup", error.what());
    }
}

void run_class_error_group(KitContext& kit, const OpUnderTest& op) {
    try {
        for (const ClassCase& c : op.class_kit->refused(kit.seed)) record(kit, kGroupErrors, op, c);
        const nnplug_op_schema* schema = schema_of(op);
        const std::vector<ClassCase> valid = op.class_kit->random(kit.seed, true);
        const ClassCase* base = schema != nullptr ? error_base(*schema, valid) : nullptr;
        if (base == nullptr) {
            kit.report.fail(
                kGroupErrors, op.api, "setup",
                "no published schema, or no reducing float32 case with rows to derive errors from");
            return;
        }
        for (const ClassErrorCase& error : class_error_cases(*schema, *base)) record_error(kit, op, error);
    } catch (const std::exception& error) {
        kit.report.fail(kGroupErrors, op.api, "setup", error.what());
    }
}

// Host threads at once, each on a stream of its own, each running every case a few times:
// every run must meet the case's expectations as a lone run does.
void run_class_concurrency_group(KitContext& kit, const OpUnderTest& op) {
    const std::vector<ClassCase> all = op.class_kit->random(kit.seed + 77, true);
    const std::vector<ClassCase> cases(all.begin(), all.begin() + std::min<size_t>(all.size(), 6));
    const unsigned threads = std::max(2u, kit.threads);
    const int repeats = kit.quick ? 2 : 4;
    running(kGroupConcurrency, op.api, "threads_" + std::to_string(threads));
    std::vector<std::string> faults(threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            aclrtStream stream = nullptr;
            if (aclrtCreateStream(&stream) != ACL_SUCCESS) {
                faults[t] = std::string("aclrtCreateStream: ") + aclGetRecentErrMsg();
                return;
            }
            for (int r = 0; r < repeats && faults[t].empty(); ++r)
                for (size_t i = 0; i < cases.size() && faults[t].empty(); ++i) {
                    const std::string why = run_class_case(op, cases[i], stream);
                    if (!why.empty() && why.rfind(kRefusedPrefix, 0) != 0)
                        faults[t] = cases[i].name + " on thread " + std::to_string(t) + ": " + why;
                }
            aclrtDestroyStream(stream);
        });
    for (std::thread& worker : workers) worker.join();
    for (const std::string& fault : faults)
        if (!fault.empty())
            return kit.report.fail(kGroupConcurrency, op.api, "threads_" + std::to_string(threads), fault);
    kit.report.pass(kGroupConcurrency, op.api);
}

// The op's first operand in host memory: the backend computes the call as with device
// memory (its outputs meet the case's expectations) or refuses it at the first phase,
// well-formed and naming the operand.
void run_class_refusal_group(KitContext& kit, const OpUnderTest& op) {
    const std::string name = "host_memory_" + op.operands.front();
    running(kGroupRefusals, op.api, name);
    try {
        const ClassCase c = op.class_kit->random(kit.seed + 7, true).front();
        // A backend that refuses the call with device memory (an op its SoC lacks) has
        // nothing to show here.
        if (const std::string why = run_class_case(op, c); why.rfind(kRefusedPrefix, 0) == 0)
            return kit.report.refuse(kGroupRefusals, op.api, name, why.substr(std::strlen(kRefusedPrefix)));
        std::vector<uint8_t> host = encode(c.tensors[0].values, c.tensors[0].dtype);
        const std::vector<int64_t>& shape = c.tensors[0].shape;
        const std::vector<int64_t> strides = contiguous_strides(shape);
        aclTensor* host_operand =
            aclCreateTensor(shape.data(), shape.size(), c.tensors[0].dtype, strides.data(), 0, ACL_FORMAT_ND,
                            shape.data(), shape.size(), host.data());
        Uploaded uploaded(c);
        uploaded.arguments[0] = host_operand;
        std::string message;
        bool first_failed = false;
        const aclnnStatus status = run_call(op, uploaded, c, message, first_failed);
        aclDestroyTensor(host_operand);
        std::string fault;
        if (first_failed) {
            fault = refusal_fault(op, status, message);
            if (fault.empty() && message.find(op.operands.front()) == std::string::npos)
                fault = "the refusal does not name the operand " + op.operands.front() + ": " + message;
            if (fault.empty()) return kit.report.refuse(kGroupRefusals, op.api, name, message);
        } else if (status != ACLNN_SUCCESS) {
            fault = "accepted at the first phase, then failed: " + message;
        }
        for (size_t slot = 0; fault.empty() && slot < c.expected.size(); ++slot)
            if (!c.expected[slot].empty()) fault = compare_output(op, c, uploaded, slot);
        if (fault.empty())
            kit.report.pass(kGroupRefusals, op.api);
        else
            kit.report.fail(kGroupRefusals, op.api, name, fault);
    } catch (const std::exception& error) {
        kit.report.fail(kGroupRefusals, op.api, name, error.what());
    }
}

void run_class_golden_group(KitContext& kit, const OpUnderTest& op) {
    for (const auto& [api, c] : kit.class_golden)
        if (api == op.api) record(kit, kGroupGolden, op, c);
}

namespace {

aclDataType golden_dtype(const std::string& word) {
    static const std::pair<const char*, aclDataType> kWords[] = {{"f32", ACL_FLOAT}, {"f16", ACL_FLOAT16},
                                                                 {"bf16", ACL_BF16}, {"i64", ACL_INT64},
                                                                 {"i32", ACL_INT32}, {"u8", ACL_UINT8}};
    for (const auto& [name, dtype] : kWords)
        if (word == name) return dtype;
    throw std::runtime_error("unknown dtype '" + word + "'");
}

HostTensor read_tensor(std::istringstream& line) {
    std::string dtype;
    line >> dtype;
    if (dtype == "none") return {};
    HostTensor t;
    t.present = true;
    t.dtype = golden_dtype(dtype);
    size_t rank = 0;
    line >> rank;
    t.shape.resize(rank);
    for (int64_t& d : t.shape) line >> d;
    t.values.resize(static_cast<size_t>(element_count(t.shape)));
    for (float& v : t.values) line >> v;
    return t;
}

AttrArg read_attr(std::istringstream& line) {
    std::string kind;
    line >> kind;
    if (kind == "int64") {
        int64_t value = 0;
        line >> value;
        return AttrArg::int64(value);
    }
    if (kind == "double") {
        double value = 0;
        line >> value;
        return AttrArg::real(value);
    }
    if (kind == "bool") {
        int value = 0;
        line >> value;
        return AttrArg::boolean(value != 0);
    }
    if (kind != "word") throw std::runtime_error("unknown attribute kind '" + kind + "'");
    std::string word;
    line >> word;
    return AttrArg::reduction(word);
}

// One line of a case into c; false at its "end".
bool read_case_line(const std::string& text, ClassCase& c) {
    std::istringstream line(text);
    std::string word;
    line >> word;
    if (word == "end") return false;
    if (word == "tensor") {
        c.tensors.push_back(read_tensor(line));
    } else if (word == "attr") {
        c.attrs.push_back(read_attr(line));
    } else if (word == "expect") {
        size_t slot = 0, count = 0;
        line >> slot >> count;
        c.expected.resize(std::max(c.expected.size(), slot + 1));
        c.expected[slot].resize(count);
        for (double& v : c.expected[slot]) line >> v;
    } else {
        throw std::runtime_error("unexpected line '" + text.substr(0, 40) + "'");
    }
    if (line.fail()) throw std::runtime_error("a malformed line: '" + text.substr(0, 40) + "'");
    return true;
}

}  // namespace

std::vector<std::pair<std::string, ClassCase>> load_class_golden_cases(const std::string& file) {
    std::istringstream in(read_case_file(file));
    std::vector<std::pair<std::string, ClassCase>> cases;
    std::string text;
    while (std::getline(in, text)) {
        if (text.empty() || text[0] == '#') continue;
        std::istringstream line(text);
        std::string word, name, api;
        line >> word >> name >> api;
        if (word != "case")
            throw std::runtime_error(file + ": expected a case line, not '" + text.substr(0, 40) + "'");
        ClassCase c;
        c.name = name;
        while (std::getline(in, text) && read_case_line(text, c)) {
        }
        c.expected.resize(c.tensors.size());
        cases.emplace_back(api, std::move(c));
    }
    return cases;
}

}  // namespace nnplug::conformance
