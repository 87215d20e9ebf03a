// What an op is, as data: its operands in ABI slot order with their rules, its
// attributes with their ranges, and the order of its first-phase checks. One planner
// (op_planner.h) applies any schema; an op folder declares one and wraps its aclnn
// entry points around first_phase / second_phase (two_phase.h). Each enum takes its values
// from the published C one (nnplug/op_schema.h), so the two cannot drift apart.
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/op_schema.h>
#include <nnplug/plugin.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nnplug {

// How an operand's shape relates to the iteration space. Without kBroadcastsMutually
// operands the iteration space is self's shape; with them it is the shape self and they
// broadcast to together (NumPy's two-way rules). The kClass* rules are those of an op
// with a class axis (OpSchema::class_axis): self is (C) or (N, C, d1, ...).
enum class ShapeRule : uint8_t {
    kIteration = NNPLUG_SHAPE_ITERATION,               // self: takes part in the iteration space
    kEqualsIteration = NNPLUG_SHAPE_EQUALS_ITERATION,  // must have the iteration space's shape exactly
    // the same, and checked even when self is empty
    kEqualsIterationEvenEmpty = NNPLUG_SHAPE_EQUALS_ITERATION_EVEN_EMPTY,
    kBroadcastsTo = NNPLUG_SHAPE_BROADCASTS_TO,  // broadcasts (NumPy, one-directional) to self's shape
    // broadcasts with self (and the others like it) to a common shape
    kBroadcastsMutually = NNPLUG_SHAPE_BROADCASTS_MUTUALLY,
    // the iteration shape, or reduced (ReducedShape) when the reduction attribute is not none
    kIterationOrReduced = NNPLUG_SHAPE_ITERATION_OR_REDUCED,
    kClassRows = NNPLUG_SHAPE_CLASS_ROWS,  // self's shape without the class axis: (N, d1, ...), or [] for (C)
    // that, or reduced (ReducedShape) when the reduction is not none
    kClassRowsOrReduced = NNPLUG_SHAPE_CLASS_ROWS_OR_REDUCED,
    kClasses = NNPLUG_SHAPE_CLASSES,  // (C): one element per class, read at a class index
    // one element whatever the reduction: [] or [1]; an output is written only when the call reduces
    kOneElement = NNPLUG_SHAPE_ONE_ELEMENT,
    // any shape, only null-checked and dtype-checked: an argument CANN's API has but its
    // kernels never read or write
    kIgnored = NNPLUG_SHAPE_IGNORED
};

// The shapes a reduced output may have.
enum class ReducedShape : uint8_t {
    kScalarOrOne = NNPLUG_REDUCED_SCALAR_OR_ONE,  // [] or [1]
    kScalar = NNPLUG_REDUCED_SCALAR               // [] only
};

// The element count a mean divides by.
enum class MeanCount : uint8_t {
    kIteration = NNPLUG_MEAN_OVER_ITERATION,  // the iteration space's
    kSelf = NNPLUG_MEAN_OVER_SELF,            // self's own, even where self broadcasts to a larger space
    // the data's: the sum of the weights of the rows counted, which the kernel computes (the
    // runtime derives no scale)
    kWeights = NNPLUG_MEAN_OVER_WEIGHTS
};

// Where an op's class axis is: none (elementwise), or dim 1 of self, dim 0 when self has
// one dim (ATen's and CANN's convention for (C) and (N, C, d1, ...)).
enum class ClassAxis : uint8_t {
    kNone = NNPLUG_CLASS_AXIS_NONE,
    kSecondOrOnly = NNPLUG_CLASS_AXIS_SECOND_OR_ONLY
};

// A set of dtypes, bit NNPLUG_DTYPE_BIT(d) per nnplug_dtype d (ONNX Runtime's type
// constraints): what an operand may hold.
using DtypeSet = uint32_t;
inline constexpr DtypeSet kFloatDtypes = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) |
                                         NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
                                         NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16);
inline constexpr DtypeSet kFloat32Only = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32);

// What the second phase writes into a reduced output when self is empty (see
// OpSchema::empty_reduction_written).
enum class EmptyValue : uint8_t {
    kReduction = NNPLUG_EMPTY_REDUCTION,  // the reduction over no elements: NaN for mean, 0 for sum
    kZero = NNPLUG_EMPTY_ZERO             // 0 (a total weight)
};

// One operand, its rules named: OperandSpec::in("target", ShapeRule::kClassRows)
// .dtypes(...).may_be_null(). Unset rules take the defaults below.
struct OperandSpec {
    const char* name = "";  // the name every message uses, as the aclnn signature spells it
    bool output = false;    // written by the op
    bool optional = false;  // may be null (absent): the op's default applies
    ShapeRule shape = ShapeRule::kIteration;
    bool same_format = false;  // its format must equal self's
    bool promotes = false;     // takes part in the inputs' dtype promotion
    int dtype_of = -1;  // (optional) the slot whose dtype this one's must equal, checked with the dtypes
    // (optional) an input outside the promotion that is rounded to the promoted dtype of
    // the others before use (NNPLUG_ATTR_PROMOTED_DTYPE), as a cast to it would.
    bool rounded_to_promoted = false;
    DtypeSet allowed = kFloatDtypes;  // the dtypes it may have
    uint16_t ranks = 0;               // bit r: r dims allowed; 0: any rank up to NNPLUG_MAX_DIMS
    EmptyValue empty_value = EmptyValue::kReduction;

    static OperandSpec in(const char* name, ShapeRule shape) { return make(name, false, shape); }
    static OperandSpec out(const char* name, ShapeRule shape) { return make(name, true, shape); }
    OperandSpec may_be_null() const {
        return with([](OperandSpec& s) { s.optional = true; });
    }
    OperandSpec same_format_as_self() const {
        return with([](OperandSpec& s) { s.same_format = true; });
    }
    OperandSpec promoting() const {
        return with([](OperandSpec& s) { s.promotes = true; });
    }
    OperandSpec dtype_equal_to(int slot) const {
        return with([slot](OperandSpec& s) { s.dtype_of = slot; });
    }
    OperandSpec rounded_to_promoted_dtype() const {
        return with([](OperandSpec& s) { s.rounded_to_promoted = true; });
    }
    OperandSpec dtypes(DtypeSet set) const {
        return with([set](OperandSpec& s) { s.allowed = set; });
    }
    OperandSpec of_ranks(std::initializer_list<int> list) const {
        return with([list](OperandSpec& s) {
            s.ranks = 0;
            for (const int r : list) s.ranks = static_cast<uint16_t>(s.ranks | (1u << r));
        });
    }
    OperandSpec empty_writes(EmptyValue value) const {
        return with([value](OperandSpec& s) { s.empty_value = value; });
    }
    bool rank_allowed(size_t rank) const {
        return ranks == 0 ? rank <= NNPLUG_MAX_DIMS : (ranks >> rank) & 1u;
    }

private:
    static OperandSpec make(const char* name, bool output, ShapeRule shape) {
        OperandSpec spec;
        spec.name = name;
        spec.output = output;
        spec.shape = shape;
        return spec;
    }
    template <typename Edit>
    OperandSpec with(Edit edit) const {
        OperandSpec copy = *this;
        edit(copy);
        return copy;
    }
};

// What an op promises about the values it writes (nnplug_numeric_promise).
enum class NumericPromise : uint8_t {
    kTolerance = NNPLUG_PROMISE_TOLERANCE,  // within its page's tolerance of the float64 reference
    // every element is its canonical float32 expression, bit for bit
    kCanonicalBits = NNPLUG_PROMISE_CANONICAL_BITS,
    // the same given the backend's own exp and log values (unreduced)
    kCanonicalOrder = NNPLUG_PROMISE_CANONICAL_ORDER
};

// The C type of an attribute argument; kReductionWord is CANN's `char*` reduction
// ("none", "mean", "sum"), checked into the i64 NNPLUG_ATTR_REDUCTION.
enum class AttrType : uint8_t {
    kInt64 = NNPLUG_ATTR_ARG_INT64,
    kDouble = NNPLUG_ATTR_ARG_DOUBLE,
    kFloat = NNPLUG_ATTR_ARG_FLOAT,
    kBool = NNPLUG_ATTR_ARG_BOOL,
    kReductionWord = NNPLUG_ATTR_ARG_REDUCTION_WORD
};

struct AttrSpec {
    nnplug_attr_key key;
    const char* name;   // as the aclnn signature spells it
    int64_t min, max;   // the valid range of an integer
    const char* range;  // the message's description of the range: "0 (none), 1 (mean) or 2 (sum)"
    AttrType type = AttrType::kInt64;
    double min_real = 0, max_real = 0;  // the valid range of a double or float (inclusive)
    // An ignoreIndex whose negative values ignore nothing (CrossEntropyLoss): the descriptor
    // then carries no NNPLUG_ATTR_IGNORE_INDEX.
    bool negative_ignores_nothing = false;
};

// ignoreIndex: any int64; a target equal to it is not counted.
inline constexpr AttrSpec kIgnoreIndexAttr = {NNPLUG_ATTR_IGNORE_INDEX, "ignoreIndex", INT64_MIN, INT64_MAX,
                                              "an int64"};

// The loss ops' reduction argument, as CANN's aclnn signatures spell and bound it.
inline constexpr AttrSpec kReductionAttr = {NNPLUG_ATTR_REDUCTION, "reduction", NNPLUG_REDUCTION_NONE,
                                            NNPLUG_REDUCTION_SUM, "0 (none), 1 (mean) or 2 (sum)"};

// reduction 3, batchmean (KlDiv): the sum divided by self's first dimension (1 for a 0-d
// self). Backends never see it: the planner describes it as a mean with that divisor.
inline constexpr int64_t kReductionBatchmean = 3;

// The reduction argument of a loss that also takes batchmean.
inline constexpr AttrSpec kBatchmeanReductionAttr = {NNPLUG_ATTR_REDUCTION, "reduction",
                                                     NNPLUG_REDUCTION_NONE, kReductionBatchmean,
                                                     "0 (none), 1 (mean), 2 (sum) or 3 (batchmean)"};

// The first-phase checks; each op lists them in the order its API documents.
enum class Check : uint8_t {
    kNull = NNPLUG_CHECK_NULL,           // required tensors, workspaceSize and executor not null
    kRank = NNPLUG_CHECK_RANK,           // at most NNPLUG_MAX_DIMS dims, and the operand's own ranks
    kDtype = NNPLUG_CHECK_DTYPE,         // the operand's dtype set, and the device's dtype rule
    kFormat = NNPLUG_CHECK_FORMAT,       // same_format operands agree with self
    kShape = NNPLUG_CHECK_SHAPE,         // shape rules (skipped for an empty self)
    kAttrs = NNPLUG_CHECK_ATTRS,         // attributes within range
    kPromotion = NNPLUG_CHECK_PROMOTION  // the inputs promote to a type castable to every output
};

// One dtype check of one operand (nnplug_dtype_step), for an API that checks dtypes in an
// order of its own (OpSchema::dtype_steps).
enum class DtypeRule : uint8_t {
    kInSet = NNPLUG_DTYPE_IN_SET,                // the operand's set and the device's rule
    kEqualsOther = NNPLUG_DTYPE_EQUALS_OTHER,    // its dtype_of operand's dtype
    kCastFromSelf = NNPLUG_DTYPE_CAST_FROM_SELF  // self's dtype casts to it
};
struct DtypeStep {
    int slot;
    DtypeRule rule;
};

// One attribute argument of a call, as its entry point received it.
struct AttrValue {
    AttrType type;
    union {
        int64_t i64;
        double f64;
        bool boolean;
        const char* word;
    };
    AttrValue(int64_t value) : type(AttrType::kInt64), i64(value) {}  // NOLINT: implicit on purpose
    AttrValue(double value) : type(AttrType::kDouble), f64(value) {}  // NOLINT
    AttrValue(float value) : type(AttrType::kFloat), f64(value) {}    // NOLINT
    AttrValue(bool value) : type(AttrType::kBool), boolean(value) {}  // NOLINT
    AttrValue(const char* value) : type(AttrType::kReductionWord), word(value) {}  // NOLINT
    AttrValue(int) = delete;  // say int64_t{...}: an int literal would be ambiguous
};

// The arguments of one call, in schema order.
struct OpCall {
    const aclTensor* const* tensors;  // one per OperandSpec
    const AttrValue* attrs;           // one per AttrSpec
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
    // (optional) The op kind whose loss this op is the gradient of, with respect to self
    // (-1: none); the kit checks a gradient against finite differences of that loss.
    int32_t gradient_of = -1;
    ClassAxis class_axis = ClassAxis::kNone;
    // The status of a failed attribute check (CANN's tiling refuses some with 561002).
    aclnnStatus attr_status = ACLNN_ERR_PARAM_INVALID;
    // (optional) Check::kDtype's steps in the API's own order; what they leave out is then
    // checked as without them: each operand's set in slot order, then each dtype_of.
    std::vector<DtypeStep> dtype_steps = {};
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
