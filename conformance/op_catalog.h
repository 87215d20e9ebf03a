// The ops as the conformance kit and the tests drive them: each op's tensor arguments and
// attributes in the order of its aclnn signature, and its two phases. The golden-case runner, the
// cross-backend comparison and the other op-generic tests build any call from this
// table. Each op folder's <folder>_kit.cpp appends its entries (register_<folder>_kit), found
// by the build (nnplug_op_sources), so a new op adds a file there, not a line here.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nnplug::conformance {

// One element of a random case, as the kit draws it: gradOutput g, self x, target y, weight w
// and posWeight p (absent ones: g = w = 1, has_p false), the op's scale (1/N for a gradient's
// mean) in float32 and float64.
struct ElementInputs {
    float g, x, y, w, p;
    bool has_p;
    float scale;
    double scale64;
};

// What the element must come out as: the canonical float32 expression, the float64 reference,
// and the magnitude of the terms the float32 expression rounds (the cancellation allowance).
struct ElementExpectation {
    float canonical;
    double reference, magnitude;
};

// The values `self` holds in the kit's random cases.
enum class SelfValues { kProbability, kLogit, kReal };

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
    bool rounds_to_promoted() const;        // some operand is
};

struct OpUnderTest {
    std::string name;                   // the op's word in golden files: "forward", "with_logits_backward"
    const char* api;                    // "aclnnBinaryCrossEntropy"
    std::vector<std::string> operands;  // tensor arguments in signature order, by their golden role
    std::vector<std::string> attrs;     // integer arguments in signature order
    std::string output;                 // the operand the op writes
    // The first phase with tensors and attrs in signature order.
    aclnnStatus (*first_phase)(const std::vector<const aclTensor*>& tensors,
                               const std::vector<int64_t>& attrs, uint64_t* workspace_size,
                               aclOpExecutor** executor);
    aclnnStatus (*second_phase)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                                aclrtStream stream);
    // Every output element is one canonical float32 expression of its inputs, with no
    // reduction in between: every backend gives the same bits (the cross-backend test
    // compares them bit for bit), though not necessarily PyTorch's (exp and log differ).
    bool same_bits_on_every_backend = false;
    KitRules kit;
    SchemaRules schema;  // filled in by op_catalog()
};

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
const std::vector<OpUnderTest>& op_catalog();
// The op called name; throws std::out_of_range for an unknown one.
const OpUnderTest& op_named(const std::string& name);

// Runs a first phase and its second phase with a fresh device workspace on stream (null:
// the default stream), then synchronizes it. Returns the first non-success status (with
// the message in aclGetRecentErrMsg).
aclnnStatus run_op(const OpUnderTest& op, const std::vector<const aclTensor*>& tensors,
                   const std::vector<int64_t>& attrs, aclrtStream stream = nullptr);

}  // namespace nnplug::conformance
