// What an op is, as data: its operands in ABI slot order with their rules, its
// attributes with their ranges, and the order of its first-phase checks. One planner
// (op_planner.h) applies any schema; an op folder declares one and wraps its aclnn
// entry points around first_phase / second_phase (two_phase.h).
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nnplug {

// How an operand's shape relates to the iteration space. Without kBroadcastsMutually
// operands the iteration space is self's shape; with them it is the shape self and they
// broadcast to together (NumPy's two-way rules).
enum class ShapeRule : uint8_t {
    kIteration,                 // self: takes part in the iteration space
    kEqualsIteration,           // must have the iteration space's shape exactly
    kEqualsIterationEvenEmpty,  // the same, and checked even when self is empty
    kBroadcastsTo,              // broadcasts (NumPy, one-directional) to self's shape
    kBroadcastsMutually,        // broadcasts with self (and the others like it) to a common shape
    kIterationOrReduced         // the iteration shape, or reduced (ReducedShape) when the
                                // reduction attribute is not none
};

// The shapes a reduced output may have.
enum class ReducedShape : uint8_t {
    kScalarOrOne,  // [] or [1]
    kScalar        // [] only
};

// The element count a mean divides by.
enum class MeanCount : uint8_t {
    kIteration,  // the iteration space's
    kSelf        // self's own, even where self broadcasts to a larger space
};

struct OperandSpec {
    const char* name;  // the name every message uses, as the aclnn signature spells it
    bool output;       // written by the op
    bool optional;     // may be null (absent): the op's default applies
    ShapeRule shape;
    bool same_format;   // its format must equal self's
    bool promotes;      // takes part in the inputs' dtype promotion
    int dtype_of = -1;  // (optional) the slot whose dtype this one's must equal, checked with the dtypes
    // (optional) an input outside the promotion that is rounded to the promoted dtype of
    // the others before use (NNPLUG_ATTR_PROMOTED_DTYPE), as a cast to it would.
    bool rounded_to_promoted = false;
};

// What an op promises about the values it writes (nnplug_numeric_promise).
enum class NumericPromise : uint8_t {
    kTolerance,      // within its page's tolerance of the float64 reference
    kCanonicalBits,  // every element is its canonical float32 expression, bit for bit
    kCanonicalOrder  // the same given the backend's own exp and log values (unreduced)
};

struct AttrSpec {
    nnplug_attr_key key;
    const char* name;   // as the aclnn signature spells it
    int64_t min, max;   // the valid range
    const char* range;  // the message's description of the range: "0 (none), 1 (mean) or 2 (sum)"
};

// The loss ops' reduction argument, as CANN's aclnn signatures spell and bound it.
inline constexpr AttrSpec kReductionAttr = {NNPLUG_ATTR_REDUCTION, "reduction", NNPLUG_REDUCTION_NONE,
                                            NNPLUG_REDUCTION_SUM, "0 (none), 1 (mean) or 2 (sum)"};

// The first-phase checks; each op lists them in the order its API documents.
enum class Check : uint8_t {
    kNull,      // required tensors, workspaceSize and executor not null
    kRank,      // at most NNPLUG_MAX_DIMS dims
    kDtype,     // float32/float16/bfloat16, and the device's dtype rule
    kFormat,    // same_format operands agree with self
    kShape,     // shape rules (skipped for an empty self)
    kAttrs,     // attributes within range
    kPromotion  // the inputs promote to a type castable to every output
};

// The arguments of one call, in schema order.
struct OpCall {
    const aclTensor* const* tensors;  // one per OperandSpec
    const int64_t* attrs;             // one per AttrSpec
};

struct OpSchema {
    nnplug_op_kind kind;
    const char* api;  // "aclnnBinaryCrossEntropy": messages, executor matching
    std::vector<OperandSpec> operands;
    std::vector<AttrSpec> attrs;
    std::vector<Check> checks;
    // A reduced output has a value even over no elements (mean NaN, sum 0): with an empty
    // self its shape is still checked and the second phase writes that value. Otherwise an
    // empty self skips the shape rules and the run does nothing.
    bool empty_reduction_written = false;
    ReducedShape reduced_shape = ReducedShape::kScalarOrOne;
    MeanCount mean_count = MeanCount::kIteration;
    NumericPromise promise = NumericPromise::kTolerance;
    // (optional) a rule the tables cannot say, run after the listed checks; returns a
    // status and leaves the message, like any check.
    aclnnStatus (*extra_check)(const OpSchema&, const OpCall&) = nullptr;

    int self_slot() const;                  // the kIteration operand
    int attr_index(nnplug_attr_key) const;  // -1 when the op has no such attribute
};

// Publishes a schema through nnplug/op_schema.h (op_schema_published.cpp). Each op file
// registers the schemas it defines, after them, as a namespace-scope object, so the
// published list is the runtime's own schemas and names no op.
class SchemaRegistration {
public:
    explicit SchemaRegistration(const OpSchema& schema);
};

// Every registered schema, in registration order.
const std::vector<const OpSchema*>& registered_schemas();

}  // namespace nnplug
