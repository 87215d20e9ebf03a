// The ops as the conformance kit and the tests drive them: each op's tensor arguments and
// attributes in the order of its aclnn signature, and its two phases. The golden-case runner, the
// cross-backend comparison and the other op-generic tests build any call from this
// table. Each op folder's <folder>_kit.cpp appends its entries (register_<folder>_kit), found
// by the build (nnplug_op_sources), so a new op adds a file there, not a line here.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <nnplug/op_schema.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nnplug::conformance {

// An attribute argument, in the C type its schema declares (nnplug_attr_arg_type): an
// int64, a double, a float, a bool or a reduction word (null when `null_word`). An int64
// converts implicitly, so a call's reduction reads as itself: `{reduction}`.
struct AttrArg {
    int32_t type = NNPLUG_ATTR_ARG_INT64;
    int64_t i = 0;
    double f = 0;  // a float's value too (exactly a float then)
    bool b = false;
    std::string word;
    bool null_word = false;
    AttrArg() = default;
    AttrArg(int64_t value) : i(value) {}  // NOLINT(google-explicit-constructor)
    static AttrArg int64(int64_t value) { return {value}; }
    static AttrArg real(double value) { return typed(NNPLUG_ATTR_ARG_DOUBLE, value); }
    static AttrArg float32(float value) { return typed(NNPLUG_ATTR_ARG_FLOAT, value); }
    static AttrArg boolean(bool value) {
        AttrArg a;
        a.type = NNPLUG_ATTR_ARG_BOOL;
        a.b = value;
        return a;
    }
    static AttrArg reduction(const std::string& value) {
        AttrArg a;
        a.type = NNPLUG_ATTR_ARG_REDUCTION_WORD;
        a.word = value;
        return a;
    }
    // The argument of an attribute of C type `type` written as `text` in a golden file (a
    // number; a bool 0 or 1); throws std::invalid_argument for text that is not one.
    static AttrArg parse(int32_t type, const std::string& text);

private:
    static AttrArg typed(int32_t type, double value) {
        AttrArg a;
        a.type = type;
        a.f = value;
        return a;
    }
};

// One element of a random case, as the kit draws it: gradOutput g, self x, target y, weight w
// and posWeight p (absent ones: g = w = 1, has_p false), the op's scale (1/N for a gradient's
// mean) in float32 and float64, and the call's attributes in signature order (attrs[0] the
// reduction; beta, logTarget after it).
struct ElementInputs {
    float g, x, y, w, p;
    bool has_p;
    float scale;
    double scale64;
    const AttrArg* attrs = nullptr;
};

// What the element must come out as: the canonical float32 expression, the float64 reference,
// and the magnitude of the terms the float32 expression rounds (the cancellation allowance).
struct ElementExpectation {
    float canonical;
    double reference, magnitude;
};

// The values `self` holds in the kit's random cases.
enum class SelfValues { kProbability, kLogit, kReal };

// The values `target` holds: real values for an op whose self is real, probabilities in
// [0, 1] otherwise (kLikeSelf); -1 and 1 only (kSign: a margin loss's labels); or values in
// (0, 1], never 0 (kPositive: a divergence's probabilities, whose logarithm is taken).
enum class TargetValues { kLikeSelf, kSign, kPositive };

// What the kit needs to know of an op that only its folder can say: its element formulas
// and the values self holds.
struct KitRules {
    ElementExpectation (*evaluate)(const ElementInputs&) = nullptr;
    SelfValues self_values = SelfValues::kReal;
    // For an op whose docs fix every operation but one transcendental value per element (a
    // backend's own exp or log): the inputs of the probe call whose result at an element is
    // that value (every operand present, float32, no reduction), and the canonical float32
    // expression given it. The kit then expects that expression's exact bits.
    ElementInputs (*probe_inputs)(const ElementInputs&) = nullptr;
    float (*canonical_given)(const ElementInputs&, float probed) = nullptr;
    TargetValues target_values = TargetValues::kLikeSelf;
    // The values of the attributes after the reduction (in signature order) that the random
    // cases take in turn, e.g. {{AttrArg::float32(1.0f)}, {AttrArg::float32(0.5f)}}; empty:
    // the op has no attribute but the reduction.
    std::vector<std::vector<AttrArg>> attr_sets;
    // For a gradient (its schema's gradient_of): the operand it differentiates its loss by;
    // the finite-difference check moves that operand's values.
    const char* gradient_wrt = "self";
};

// The rules the kit's random and error cases follow, derived by op_catalog() from the
// schema libnnplug publishes for the op (nnplug/op_schema.h), never stated by hand.
struct SchemaRules {
    bool reducing = false;                  // a loss: mean and sum reduce out to one element
    bool reduced_zero_d_only = false;       // a reduced out must be 0-d ([1] is refused)
    bool out_dtype_is_target = false;       // out's dtype must equal target's
    bool checks_format = false;             // self, target and out must share a format
    bool broadcasts_mutually = false;       // the inputs broadcast to each other, not to self
    bool mean_over_self = false;            // a gradient's mean divides by self's own count
    bool inputs_share_dtype = false;        // every input has self's dtype (no promotion)
    bool bit_exact = false;                 // every element is its canonical expression exactly
    bool canonical_order = false;           // the same given the backend's exp and log (probed)
    std::vector<bool> optional;             // per operand: may be absent
    std::vector<bool> rounded_to_promoted;  // per operand: cast to promote(self, target) first
    int64_t max_reduction = 2;              // 3: the op takes batchmean (the sum over self's dim 0)
    std::vector<int32_t> attr_types;        // per attribute: its nnplug_attr_arg_type
    bool rounds_to_promoted() const;        // some operand is
};

// One tensor argument of a class case: absent, or a contiguous tensor (integers held as floats).
struct HostTensor {
    bool present = false;
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> shape;
    std::vector<float> values;  // an output's: its storage before the run
    static HostTensor of(aclDataType dtype, std::vector<int64_t> shape, std::vector<float> values) {
        return {true, dtype, std::move(shape), std::move(values)};
    }
};

// A case of an op with a class axis, made by its folder's generators (or read from a golden
// file): the arguments, and what each output must hold after the run.
struct ClassCase {
    std::string name;
    std::vector<HostTensor> tensors;  // per operand, in signature order
    std::vector<AttrArg> attrs;       // in signature order
    // Per operand: the float64 values an output must hold (empty: not checked), within its
    // dtype's tolerance.
    std::vector<std::vector<double>> expected;
    // (optional) Per operand: the magnitude of the terms its float32 values cancel (a logProb
    // x - lse of logits near 100 keeps only their absolute precision); each value may be off
    // by a few float32 units of it beyond the relative tolerance.
    std::vector<double> magnitude;
    // Non-empty: a value only the data shows is wrong; the call (or the stream's synchronize)
    // must fail with a message holding this text and leave every output untouched.
    std::string refusal;
};

// What the kit needs of an op with a class axis, from its folder: the call with typed
// attributes and the case generators; the kit runs them on every backend.
struct ClassKit {
    aclnnStatus (*first_phase)(const std::vector<const aclTensor*>& tensors,
                               const std::vector<AttrArg>& attrs, uint64_t* workspace_size,
                               aclOpExecutor** executor) = nullptr;
    // Random cases with their float64 expectations: every reduction, ignored rows, weights a
    // 16-bit type cannot hold, every target and input dtype, strided rows.
    std::vector<ClassCase> (*random)(uint64_t seed, bool quick) = nullptr;
    // Cases whose data the kernel must refuse (a class index outside [0, C)).
    std::vector<ClassCase> (*refused)(uint64_t seed) = nullptr;
    // (optional) For a gradient: finite differences of the forward op, both run on the
    // backend; returns why they disagree with the gradient, or "".
    std::string (*gradient_check)(uint64_t seed) = nullptr;
};

struct OpUnderTest {
    std::string name;                   // the op's word in golden files: "binary_cross_entropy",
                                        // "binary_cross_entropy_with_logits_backward"
    const char* api;                    // "aclnnBinaryCrossEntropy"
    std::vector<std::string> operands;  // tensor arguments in signature order, by their golden role
    std::vector<std::string> attrs;     // attribute arguments in signature order
    std::string output;                 // the operand the op writes
    // The first phase with tensors and attrs in signature order.
    aclnnStatus (*first_phase)(const std::vector<const aclTensor*>& tensors,
                               const std::vector<AttrArg>& attrs, uint64_t* workspace_size,
                               aclOpExecutor** executor);
    aclnnStatus (*second_phase)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                                aclrtStream stream);
    // Every output element is one canonical float32 expression of its inputs, with no
    // reduction in between: every backend gives the same bits (the cross-backend test
    // compares them bit for bit), though not necessarily PyTorch's (exp and log differ).
    bool same_bits_on_every_backend = false;
    KitRules kit;
    SchemaRules schema;  // filled in by op_catalog()
    // An op with a class axis: the kit runs these instead of the elementwise cases.
    const ClassKit* class_kit = nullptr;
};

// Runs a class case through both phases on the default stream and a synchronize, with
// device tensors made from its HostTensors; returns why the outcome is not the case's
// expectation, or "" (or "refused: <message>" when the backend refused the valid call at
// its first phase, well-formed). (class_cases.cpp)
std::string run_class_case(const OpUnderTest& op, const ClassCase& c, aclrtStream stream = nullptr);
// Runs a class case and reads back operand `slot` (an output); returns the failure's
// message ("refused: <message>" for a well-formed first-phase refusal), or "".
std::string run_class_case_output(const OpUnderTest& op, const ClassCase& c, size_t slot,
                                  std::vector<float>& values);

// The op folders' entries; the build lists the files (nnplug_op_sources).
#define NNPLUG_OP_SOURCE(stem) void register_##stem(std::vector<OpUnderTest>& ops);
#include "conformance_op_sources.inc"
#undef NNPLUG_OP_SOURCE

// An output argument of an aclnn call, from the catalog's const list.
inline aclTensor* writable(const aclTensor* tensor) {
    return const_cast<aclTensor*>(tensor);
}

// Every op nnplug implements, with its SchemaRules. Throws std::logic_error for an entry
// whose published schema is missing or has other operands.
const std::vector<OpUnderTest>& all_ops();
// The elementwise ops of all_ops(), which the elementwise generators and tests drive.
const std::vector<OpUnderTest>& op_catalog();
// The schema libnnplug publishes for op; throws std::logic_error when there is none or it
// has other operands than the op's entry.
const nnplug_op_schema& published_schema(const OpUnderTest& op);
// A call's attributes: the reduction, then the op's attribute set `set` (KitRules::attr_sets,
// taken in turn), if it has one.
std::vector<AttrArg> call_attrs(const OpUnderTest& op, int64_t reduction, size_t set = 0);
// The op called name; throws std::out_of_range for an unknown one.
const OpUnderTest& op_named(const std::string& name);

// The second phase of a first phase's result (first, its workspace size and executor): runs
// the executor with a fresh device workspace on stream (null: the default stream) and
// synchronizes it; returns first when that failed, else the first failing status (an
// asynchronous backend reports a kernel's refusal at the synchronize).
aclnnStatus run_executor(aclnnStatus first, uint64_t workspace_size, aclOpExecutor* executor,
                         aclnnStatus (*second_phase)(void*, uint64_t, aclOpExecutor*, aclrtStream),
                         aclrtStream stream = nullptr);

// Runs a first phase and its second phase with a fresh device workspace on stream (null:
// the default stream), then synchronizes it. Returns the first non-success status (with
// the message in aclGetRecentErrMsg).
aclnnStatus run_op(const OpUnderTest& op, const std::vector<const aclTensor*>& tensors,
                   const std::vector<AttrArg>& attrs, aclrtStream stream = nullptr);

}  // namespace nnplug::conformance
