// The parts of the conformance kit (kit.cpp drives them): the report, a case uploaded to
// the device and run through both phases, the expected results of a case, and the groups.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <nnplug/op_schema.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "golden_cases.h"
#include "op_catalog.h"

namespace nnplug::conformance {

// The outcome of every case, by group and op; thread-safe.
class Report {
public:
    void pass(const std::string& group, const std::string& op);
    void refuse(const std::string& group, const std::string& op, const std::string& name,
                const std::string& message);
    void fail(const std::string& group, const std::string& op, const std::string& name,
              const std::string& message);

    struct Tally {
        int passed = 0, refused = 0, failed = 0;
        std::vector<std::string> refusals, failures;  // "<case>: <message>"
    };
    struct Group {
        std::string name;
        std::vector<std::pair<std::string, Tally>> ops;  // in the order they were first reported
    };
    std::vector<Group> groups() const;

    // In a child process (isolated_run.h): also writes every outcome to fd as it happens,
    // one escaped line each, so that nothing reported before a crash is lost.
    void record_to(int fd) { record_fd_ = fd; }
    // Adds the outcome of one such line; false for a line that is not one.
    bool replay(const std::string& line);

private:
    Tally& tally(const std::string& group, const std::string& op);
    void record(char kind, const std::string& group, const std::string& op, const std::string& name,
                const std::string& message);
    mutable std::mutex mutex_;
    std::vector<Group> groups_;
    int record_fd_ = -1;
};

// A case's operands in device memory, ready to run any number of times.
class UploadedCase {
public:
    explicit UploadedCase(const GoldenCase& golden);
    // Restores the output's storage to the case's initial bytes.
    void reset_output() const;
    // The first phase; on success *executor holds the executor and *workspace its size.
    aclnnStatus first_phase(uint64_t* workspace, aclOpExecutor** executor) const;
    // Both phases on stream (null: the default one) and a synchronize, with a fresh
    // executor; the message of a failure is in `message`.
    aclnnStatus run(aclrtStream stream, std::string& message) const;
    std::vector<uint8_t> output() const;               // the output's storage
    std::vector<std::vector<uint8_t>> inputs() const;  // each present input's storage
    // Overwrites each present input's storage with 0xFF bytes (NaN floats, -1 indices) and
    // returns what they held; restore_inputs puts that back.
    std::vector<std::vector<uint8_t>> poison_inputs() const;
    void restore_inputs(const std::vector<std::vector<uint8_t>>& held) const;
    const std::vector<const aclTensor*>& arguments() const { return operands_.arguments; }
    // The device memory of argument k (null where it is absent).
    void* data_of(size_t argument) const;

private:
    const GoldenCase& golden_;
    const OpUnderTest& op_;
    UploadedOperands operands_;
};

// A call the first phase refused although every argument is valid: only the backend
// refuses those (its `supports`, or the SoC's dtypes). Returns "" when the refusal is
// well-formed (ACLNN_ERR_PARAM_INVALID, one line naming the op, no executor), else why not.
std::string refusal_fault(const OpUnderTest& op, aclnnStatus status, const std::string& message);

// The random cases of an op, with their expected results.
struct RandomCase {
    GoldenCase golden;               // the operands, as a golden case without expectations
    std::vector<int64_t> shape;      // the iteration space: out's shape unless reduced
    std::vector<uint8_t> canonical;  // out's storage per the canonical float32 expressions
    std::vector<double> reference;   // float64 per view element, or the one reduced value
    std::vector<double> magnitude;   // per reference value: the terms' magnitude (cancellation allowance)
};
std::vector<RandomCase> random_cases(const OpUnderTest& op, uint64_t seed, bool quick);
// A value for an operand role, with the edges of the ops' expressions now and then.
float random_value(const std::string& role, const KitRules& kit, std::mt19937_64& random);

// A probed case (probed_cases.cpp): a float32 call, unreduced, and the probe call that reads
// back each of its elements' transcendental part; both are golden cases without expectations.
struct ProbedCase {
    GoldenCase probe, golden;
    std::vector<ElementInputs> elements;  // golden's inputs per element, row-major
};
// The op's probed cases: none unless its KitRules have a probe.
std::vector<ProbedCase> probed_cases(const OpUnderTest& op, uint64_t seed);
// Why the call's output is not its canonical expression given the probed values, or "".
std::string check_probed_run(const OpUnderTest& op, const ProbedCase& c, const std::vector<uint8_t>& probed,
                             const std::vector<uint8_t>& output);
// A case of `shape` with contiguous operands and out padded, for the concurrency checks.
RandomCase concurrency_case(const OpUnderTest& op, uint64_t seed, const std::vector<int64_t>& shape);
// Why a run's output does not match a random case's expectations, or "".
std::string check_random_run(const OpUnderTest& op, const RandomCase& expected,
                             const std::vector<uint8_t>& output);

struct KitContext {
    Report& report;
    uint64_t seed;
    bool quick;
    unsigned threads;
    std::vector<GoldenCase> golden;
    std::vector<std::pair<std::string, ClassCase>> class_golden;  // (aclnn api, case)
};

// The ops with a class axis (class_cases.cpp): their golden, random (with the finite
// differences of a gradient), error, concurrency and refusal groups, over the cases their
// folders make.
void run_class_golden_group(KitContext& kit, const OpUnderTest& op);
void run_class_random_group(KitContext& kit, const OpUnderTest& op);
void run_class_error_group(KitContext& kit, const OpUnderTest& op);
void run_class_concurrency_group(KitContext& kit, const OpUnderTest& op);
void run_class_refusal_group(KitContext& kit, const OpUnderTest& op);  // the first operand in host memory
// A call the first phase must refuse with `status` and a message holding `fragment`.
struct ClassErrorCase {
    ClassCase c;
    aclnnStatus status;
    std::string fragment;
};
// The first-phase errors the published schema implies, spoiling `valid`, a reducing call
// with float32 self and rows (class_errors.cpp).
std::vector<ClassErrorCase> class_error_cases(const nnplug_op_schema& schema, const ClassCase& valid);
// The cases of a *_golden.cases file (tools/golden/generate_class_golden.py), with their api.
std::vector<std::pair<std::string, ClassCase>> load_class_golden_cases(const std::string& file);

void run_golden_group(KitContext& kit, const OpUnderTest& op);
void run_random_group(KitContext& kit,
                      const OpUnderTest& op);  // also the untouched-storage and repeat groups
void run_error_group(KitContext& kit, const OpUnderTest& op);
// A view of self whose element offsets pass 2^31 against the same values dense (kit_checks.cpp);
// reported in the random group.
void run_large_offset_case(KitContext& kit, const OpUnderTest& op);
// A gradient the published schema links to its loss (gradient_of), against central
// differences of the backend's own loss (kit_checks.cpp); reported in the random group.
void run_finite_differences(KitContext& kit, const OpUnderTest& op);
void run_concurrency_group(KitContext& kit, const OpUnderTest& op);
void run_refusal_group(KitContext& kit, const OpUnderTest& op);  // an operand in host memory
void run_memory_group(KitContext& kit);                          // the device memory rules

// Records the case about to run (isolated_run.cpp), so that a crash, exit or hang inside
// the plugin is reported with its group, op and case instead of leaving no trace: the
// watchdog of the child process running the case reads it.
void running(const char* group, const char* op, const std::string& name);
void note_case(const char* group, const char* op, const std::string& name);

// Group names, in the order the report prints them.
inline constexpr const char* kGroupGolden = "golden";
inline constexpr const char* kGroupRandom = "random";
inline constexpr const char* kGroupUntouched = "untouched";
inline constexpr const char* kGroupRepeat = "repeat";
inline constexpr const char* kGroupErrors = "errors";
inline constexpr const char* kGroupConcurrency = "concurrency";
inline constexpr const char* kGroupRefusals = "refusals";
inline constexpr const char* kGroupMemory = "memory";

}  // namespace nnplug::conformance
