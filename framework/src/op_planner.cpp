#include "op_planner.h"

#include <optional>
#include <string>
#include <utility>

#include "broadcast_plan.h"
#include "error_state.h"
#include "nnplug/escaped_text.h"
#include "tensor.h"

namespace nnplug {

int OpSchema::self_slot() const {
    for (size_t i = 0; i < operands.size(); ++i)
        if (operands[i].shape == ShapeRule::kIteration) return static_cast<int>(i);
    return 0;
}

int OpSchema::attr_index(nnplug_attr_key key) const {
    for (size_t i = 0; i < attrs.size(); ++i)
        if (attrs[i].key == key) return static_cast<int>(i);
    return -1;
}

namespace {

// The ABI's dtype of an ACL one, or none for a dtype no op takes.
std::optional<nnplug_dtype> abi_dtype_of(aclDataType dtype) {
    const int32_t abi = nnplug_dtype_of_acl(dtype);
    return abi < 0 ? std::nullopt : std::optional<nnplug_dtype>(static_cast<nnplug_dtype>(abi));
}

// "float32, float16 or bfloat16": a dtype set as messages word it.
std::string dtype_set_words(DtypeSet set) {
    std::vector<const char*> names;
    for (int32_t d = 0; d < NNPLUG_DTYPE_COUNT; ++d)
        if (set & NNPLUG_DTYPE_BIT(d)) names.push_back(nnplug_dtype_name(d));
    std::string words;
    for (size_t i = 0; i < names.size(); ++i)
        words += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    return words;
}

// CANN's reduction words and the nnplug_reduction each names; -1 for anything else.
// A null word (the argument is reductionOptional) is the default, mean.
int64_t reduction_of_word(const char* word) {
    if (word == nullptr) return NNPLUG_REDUCTION_MEAN;
    const std::string text = word;
    return text == "none"   ? NNPLUG_REDUCTION_NONE
           : text == "mean" ? NNPLUG_REDUCTION_MEAN
           : text == "sum"  ? NNPLUG_REDUCTION_SUM
                            : -1;
}

// PyTorch's promotion for the floating types: equal types stay, anything else is float32.
aclDataType promote(aclDataType a, aclDataType b) {
    return a == b ? a : ACL_FLOAT;
}

bool is_floating(aclDataType dtype) {
    return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE;
}

// PyTorch's can_cast, which CANN's result-dtype checks follow: never to a lower category
// (bool, then integers, then floating types, then complex ones).
int dtype_category(aclDataType dtype) {
    if (dtype == ACL_BOOL) return 0;
    if (is_floating(dtype)) return 2;
    if (dtype == ACL_COMPLEX64 || dtype == ACL_COMPLEX128) return 3;
    return 1;
}
bool casts_to(aclDataType from, aclDataType to) {
    return dtype_category(to) >= dtype_category(from);
}

// One call being planned: the schema, the arguments, and what the checks derive.
class Planner {
public:
    Planner(const OpSchema& schema, const OpCall& call, const DeviceTraits& device)
        : schema_(schema), call_(call), device_(device), self_(call.tensors[schema.self_slot()]) {}

    aclnnStatus run(nnplug_op_desc& desc, bool& empty_self);

private:
    const aclTensor* tensor(size_t slot) const { return call_.tensors[slot]; }
    const char* name(size_t slot) const { return schema_.operands[slot].name; }
    size_t count() const { return schema_.operands.size(); }
    // The call's reduction (an unknown word is -1), or none for an op without one.
    int64_t reduction() const {
        const int index = schema_.attr_index(NNPLUG_ATTR_REDUCTION);
        if (index < 0) return NNPLUG_REDUCTION_NONE;
        const AttrValue& value = call_.attrs[index];
        return value.type == AttrType::kReductionWord ? reduction_of_word(value.word) : value.i64;
    }
    bool reduces() const { return reduction() != NNPLUG_REDUCTION_NONE; }
    bool is_reduced(size_t slot) const {
        const ShapeRule rule = schema_.operands[slot].shape;
        return rule == ShapeRule::kOneElement ||
               ((rule == ShapeRule::kIterationOrReduced || rule == ShapeRule::kClassRowsOrReduced) &&
                reduces());
    }
    // An argument nothing reads or writes: it is not part of the descriptor.
    bool ignored(size_t slot) const { return schema_.operands[slot].shape == ShapeRule::kIgnored; }
    bool has_class_axis() const { return schema_.class_axis != ClassAxis::kNone; }
    // Self's class axis: dim 1, or 0 for a self of one dim.
    size_t class_axis() const { return self_->view_dims.size() >= 2 ? 1 : 0; }
    // Self's shape without the class axis: the shape of a target.
    std::vector<int64_t> class_rows() const {
        std::vector<int64_t> rows = self_->view_dims;
        rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(class_axis()));
        return rows;
    }
    bool broadcasts_mutually() const {
        for (const OperandSpec& spec : schema_.operands)
            if (spec.shape == ShapeRule::kBroadcastsMutually) return true;
        return false;
    }
    // The iteration space: self's shape until check_shape has broadcast the others with it.
    const std::vector<int64_t>& iteration() const { return planned_ ? iteration_ : self_->view_dims; }
    bool iteration_empty() const {
        for (const int64_t d : iteration())
            if (d == 0) return true;
        return false;
    }
    int64_t iteration_count() const {
        int64_t n = 1;
        for (const int64_t d : iteration()) n *= d;
        return n;
    }
    // What messages call the iteration space's shape.
    const char* iteration_words() const { return broadcasts_mutually() ? "the broadcast" : "self's"; }

    aclnnStatus check(Check which);
    aclnnStatus check_null();
    aclnnStatus check_rank();
    aclnnStatus check_dtype();
    aclnnStatus check_dtype_step(DtypeStep step);
    aclnnStatus check_format();
    aclnnStatus plan_iteration();
    aclnnStatus check_output_shapes(bool empty);
    aclnnStatus check_shape();
    aclnnStatus check_class_shapes();
    aclnnStatus check_reduced_shape(size_t slot, bool always_one_or_scalar);
    aclnnStatus check_attrs();
    aclnnStatus check_attr(size_t index);
    aclnnStatus check_promotion();
    aclDataType promoted_inputs() const;
    aclnnStatus check_overlap();
    aclnnStatus check_data();
    void describe(nnplug_op_desc& desc) const;
    void describe_attrs(nnplug_op_desc& desc) const;
    void plan_class_axis(nnplug_op_desc& desc) const;

    const OpSchema& schema_;
    const OpCall& call_;
    const DeviceTraits& device_;
    const aclTensor* self_;
    std::vector<int64_t> iteration_;
    bool planned_ = false;
};

aclnnStatus Planner::check_null() {
    for (size_t i = 0; i < count(); ++i) {
        if (tensor(i) == nullptr && !schema_.operands[i].optional) {
            set_last_error("{}: {} is null", schema_.api, name(i));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    // Before anything reads them: a destroyed tensor is reported, never read.
    for (size_t i = 0; i < count(); ++i) {
        if (tensor(i) != nullptr && !tensor_is_live(tensor(i))) {
            set_last_error("{}: {} is not a live tensor (destroyed already, or not made by aclCreateTensor)",
                           schema_.api, name(i));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// "1 or 2": the ranks a rule allows, as messages word them.
std::string rank_words(uint16_t ranks) {
    std::string words;
    for (int r = 0; r <= NNPLUG_MAX_DIMS; ++r) {
        if (((ranks >> r) & 1u) == 0) continue;
        const bool last = (ranks >> (r + 1)) == 0;
        words += (words.empty() ? "" : last ? " or " : ", ") + std::to_string(r);
    }
    return words;
}

aclnnStatus Planner::check_rank() {
    for (size_t i = 0; i < count(); ++i) {
        if (tensor(i) == nullptr) continue;
        const size_t rank = tensor(i)->view_dims.size();
        if (rank > NNPLUG_MAX_DIMS) {
            set_last_error("{}: {} has {} dimensions; at most {} are supported", schema_.api, name(i), rank,
                           NNPLUG_MAX_DIMS);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (!schema_.operands[i].rank_allowed(rank)) {
            set_last_error("{}: {} has {} dimensions; it must have {}", schema_.api, name(i), rank,
                           rank_words(schema_.operands[i].ranks));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// The schema's own steps first (the API's order decides the message), then every operand's
// set in slot order and every dtype_of, so that no step list can let a dtype through.
aclnnStatus Planner::check_dtype() {
    for (const DtypeStep step : schema_.dtype_steps)
        if (const aclnnStatus status = check_dtype_step(step)) return status;
    for (size_t i = 0; i < count(); ++i)
        if (const aclnnStatus status = check_dtype_step({static_cast<int>(i), DtypeRule::kInSet}))
            return status;
    for (size_t i = 0; i < count(); ++i)
        if (const aclnnStatus status = check_dtype_step({static_cast<int>(i), DtypeRule::kEqualsOther}))
            return status;
    return ACLNN_SUCCESS;
}

aclnnStatus Planner::check_dtype_step(DtypeStep step) {
    const size_t i = static_cast<size_t>(step.slot);
    if (tensor(i) == nullptr) return ACLNN_SUCCESS;
    const aclDataType dtype = tensor(i)->dtype;
    switch (step.rule) {
        case DtypeRule::kInSet: {
            const auto abi = abi_dtype_of(dtype);
            const DtypeSet allowed = schema_.operands[i].allowed;
            if (!abi || (allowed & NNPLUG_DTYPE_BIT(*abi)) == 0) {
                set_last_error("{}: {} has dtype {}; expected {}", schema_.api, name(i), dtype_name(dtype),
                               dtype_set_words(allowed));
                return ACLNN_ERR_PARAM_INVALID;
            }
            if ((device_.dtype_mask & NNPLUG_DTYPE_BIT(*abi)) == 0) {
                set_last_error("{}: {} has dtype {}, which SoC {} does not support", schema_.api, name(i),
                               dtype_name(dtype), device_.soc_name);
                return ACLNN_ERR_PARAM_INVALID;
            }
            return ACLNN_SUCCESS;
        }
        case DtypeRule::kEqualsOther: {
            const int other = schema_.operands[i].dtype_of;
            if (other < 0 || tensor(other) == nullptr || dtype == tensor(other)->dtype) return ACLNN_SUCCESS;
            set_last_error("{}: {} has dtype {} but {} has dtype {}; they must be equal", schema_.api,
                           name(i), dtype_name(dtype), name(other), dtype_name(tensor(other)->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
        case DtypeRule::kCastFromSelf:
            if (casts_to(self_->dtype, dtype)) return ACLNN_SUCCESS;
            set_last_error("{}: self's dtype {} cannot be cast to {}'s {}", schema_.api,
                           dtype_name(self_->dtype), name(i), dtype_name(dtype));
            return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_ERR_INNER;
}

aclnnStatus Planner::check_format() {
    for (size_t i = 0; i < count(); ++i) {
        if (!schema_.operands[i].same_format || tensor(i) == nullptr || tensor(i) == self_) continue;
        if (tensor(i)->format != self_->format) {
            set_last_error("{}: {} has format {} but self has format {}", schema_.api, name(i),
                           format_name(tensor(i)->format), format_name(self_->format));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// Self and the operands that broadcast mutually, in slot order, to their common shape.
aclnnStatus Planner::plan_iteration() {
    std::vector<int64_t> shape;
    std::string names;
    for (size_t i = 0; i < count(); ++i) {
        const ShapeRule rule = schema_.operands[i].shape;
        if ((rule != ShapeRule::kIteration && rule != ShapeRule::kBroadcastsMutually) || tensor(i) == nullptr)
            continue;
        if (!names.empty() && !broadcast_shapes(shape, tensor(i)->view_dims, shape)) {
            set_last_error("{}: {} shape {} cannot broadcast with {} shape {}", schema_.api, name(i),
                           shape_string(tensor(i)->view_dims), names, shape_string(shape));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (names.empty()) shape = tensor(i)->view_dims;
        names += names.empty() ? name(i) : std::string(" and ") + name(i);
    }
    iteration_ = std::move(shape);
    planned_ = true;
    return ACLNN_SUCCESS;
}

aclnnStatus Planner::check_output_shapes(bool empty) {
    for (size_t i = 0; i < count(); ++i) {
        const OperandSpec& spec = schema_.operands[i];
        if (!spec.output || tensor(i) == nullptr) continue;
        if (empty && !(is_reduced(i) && schema_.empty_reduction_written)) continue;
        const auto& shape = tensor(i)->view_dims;
        if (is_reduced(i)) {
            const bool one =
                shape.size() == 1 && shape[0] == 1 && schema_.reduced_shape == ReducedShape::kScalarOrOne;
            if (shape.empty() || one) continue;
            set_last_error("{}: {} shape {} must be {} for a reduced loss", schema_.api, spec.name,
                           shape_string(shape),
                           schema_.reduced_shape == ReducedShape::kScalar ? "[] (0-d)" : "[] or [1]");
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (shape != iteration()) {
            set_last_error("{}: {} shape {} must be {} shape {}", schema_.api, spec.name, shape_string(shape),
                           iteration_words(), shape_string(iteration()));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// Mutual broadcasting first (it defines the iteration space), then outputs, inputs that
// must equal the iteration space, and the one-directional broadcasts, each in slot order.
// An empty iteration space skips the rules after the mutual broadcast, except
// kEqualsIterationEvenEmpty and, when the op writes a reduction over no elements, the
// reduced output's.
aclnnStatus Planner::check_shape() {
    if (has_class_axis()) return check_class_shapes();
    if (broadcasts_mutually())
        if (const aclnnStatus status = plan_iteration()) return status;
    const bool empty = iteration_empty();
    if (const aclnnStatus status = check_output_shapes(empty)) return status;
    for (size_t i = 0; i < count(); ++i) {
        const OperandSpec& spec = schema_.operands[i];
        const bool equals = spec.shape == ShapeRule::kEqualsIterationEvenEmpty ||
                            (spec.shape == ShapeRule::kEqualsIteration && !empty);
        if (spec.output || !equals || tensor(i) == nullptr) continue;
        if (tensor(i)->view_dims != iteration()) {
            set_last_error("{}: {} shape {} must equal {} shape {}", schema_.api, spec.name,
                           shape_string(tensor(i)->view_dims),
                           broadcasts_mutually() ? "the broadcast" : "self", shape_string(iteration()));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (empty) return ACLNN_SUCCESS;
    for (size_t i = 0; i < count(); ++i) {
        const OperandSpec& spec = schema_.operands[i];
        if (spec.output || spec.shape != ShapeRule::kBroadcastsTo || tensor(i) == nullptr) continue;
        if (!broadcasts_to(tensor(i)->view_dims, iteration())) {
            set_last_error("{}: {} shape {} cannot broadcast to {} shape {}", schema_.api, spec.name,
                           shape_string(tensor(i)->view_dims),
                           broadcasts_mutually() ? "the broadcast" : "self", shape_string(iteration()));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// A reduced operand, or one that always has one element: [] or, unless the op allows
// only 0-d, [1].
aclnnStatus Planner::check_reduced_shape(size_t slot, bool always_one_or_scalar) {
    const auto& shape = tensor(slot)->view_dims;
    const bool scalar_only = !always_one_or_scalar && schema_.reduced_shape == ReducedShape::kScalar;
    if (shape.empty() || (shape.size() == 1 && shape[0] == 1 && !scalar_only)) return ACLNN_SUCCESS;
    set_last_error("{}: {} shape {} must be {}{}", schema_.api, name(slot), shape_string(shape),
                   scalar_only ? "[] (0-d)" : "[] or [1]", always_one_or_scalar ? "" : " for a reduced loss");
    return ACLNN_ERR_PARAM_INVALID;
}

// The shapes of an op with a class axis: each operand has self's shape, lacks the axis
// (a target), holds one element per class (a weight) or one element. Checked even when
// there are no rows, as every shape is known without the data.
aclnnStatus Planner::check_class_shapes() {
    if (self_->view_dims.empty()) {
        set_last_error("{}: {} is 0-d; it must hold the classes along dim 1, or dim 0 when it has one dim",
                       schema_.api, name(schema_.self_slot()));
        return ACLNN_ERR_PARAM_INVALID;
    }
    const int64_t classes = self_->view_dims[class_axis()];
    if (classes == 0) {
        set_last_error("{}: {} shape {} has no classes (dim {} is 0)", schema_.api, name(schema_.self_slot()),
                       shape_string(self_->view_dims), class_axis());
        return ACLNN_ERR_PARAM_INVALID;
    }
    const std::vector<int64_t> rows = class_rows();
    for (size_t i = 0; i < count(); ++i) {
        const ShapeRule rule = schema_.operands[i].shape;
        if (tensor(i) == nullptr || rule == ShapeRule::kIgnored) continue;
        const auto& shape = tensor(i)->view_dims;
        if (rule == ShapeRule::kOneElement || (rule == ShapeRule::kClassRowsOrReduced && reduces())) {
            if (const aclnnStatus status = check_reduced_shape(i, rule == ShapeRule::kOneElement))
                return status;
            continue;
        }
        const bool classes_rule = rule == ShapeRule::kClasses;
        const bool rows_rule = rule == ShapeRule::kClassRows || rule == ShapeRule::kClassRowsOrReduced;
        const std::vector<int64_t> expected = classes_rule ? std::vector<int64_t>{classes}
                                              : rows_rule  ? rows
                                                           : self_->view_dims;
        if (shape == expected) continue;
        set_last_error("{}: {} shape {} must be {} {}", schema_.api, name(i), shape_string(shape),
                       classes_rule ? "one element per class:"
                       : rows_rule
                           ? fmt::format("{}'s shape without the class axis,", name(schema_.self_slot()))
                           : fmt::format("{}'s shape", name(schema_.self_slot())),
                       shape_string(expected));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus Planner::check_attr(size_t index) {
    const AttrSpec& spec = schema_.attrs[index];
    const AttrValue& value = call_.attrs[index];
    switch (spec.type) {
        case AttrType::kInt64:
            if (value.i64 >= spec.min && value.i64 <= spec.max) return ACLNN_SUCCESS;
            set_last_error("{}: {} {} is not {}", schema_.api, spec.name, value.i64, spec.range);
            return schema_.attr_status;
        case AttrType::kDouble:
        case AttrType::kFloat:
            if (spec.range == nullptr ||
                (value.f64 >= spec.min_real && value.f64 <= spec.max_real))  // NaN fails
                return ACLNN_SUCCESS;
            set_last_error("{}: {} {} is not {}", schema_.api, spec.name, value.f64, spec.range);
            return schema_.attr_status;
        case AttrType::kBool:
            return ACLNN_SUCCESS;
        case AttrType::kReductionWord:
            if (reduction_of_word(value.word) >= 0) return ACLNN_SUCCESS;
            set_last_error("{}: {} \"{}\" is not \"none\", \"mean\" or \"sum\"", schema_.api, spec.name,
                           escaped(std::string_view(value.word).substr(0, 64)));
            return schema_.attr_status;
    }
    return ACLNN_ERR_INNER;
}

aclnnStatus Planner::check_attrs() {
    for (size_t a = 0; a < schema_.attrs.size(); ++a)
        if (const aclnnStatus status = check_attr(a)) return status;
    return ACLNN_SUCCESS;
}

aclDataType Planner::promoted_inputs() const {
    aclDataType promoted = self_->dtype;
    for (size_t i = 0; i < count(); ++i)
        if (schema_.operands[i].promotes && tensor(i) != nullptr)
            promoted = promote(promoted, tensor(i)->dtype);
    return promoted;
}

aclnnStatus Planner::check_promotion() {
    const aclDataType promoted = promoted_inputs();
    for (size_t i = 0; i < count(); ++i) {
        if (!schema_.operands[i].output || tensor(i) == nullptr) continue;
        if (!is_floating(promoted) || !is_floating(tensor(i)->dtype)) {
            set_last_error("{}: the inputs promote to {}, which cannot be cast to {}'s {}", schema_.api,
                           dtype_name(promoted), name(i), dtype_name(tensor(i)->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// The bytes a view reaches: [first, last] relative to its data pointer (strides are never
// negative, aclCreateTensor refuses them).
struct ByteRange {
    uintptr_t first, last;
};

ByteRange byte_range(const aclTensor& t) {
    const int64_t size = static_cast<int64_t>(aclDataTypeSize(t.dtype));
    int64_t last = t.offset;
    for (size_t k = 0; k < t.view_dims.size(); ++k) last += (t.view_dims[k] - 1) * t.strides[k];
    const auto base = reinterpret_cast<uintptr_t>(t.data);
    return {base + static_cast<uintptr_t>(t.offset * size),
            base + static_cast<uintptr_t>((last + 1) * size - 1)};
}

// The same elements in the same order: writing one while reading the other is elementwise
// in place, which every backend supports.
bool same_view(const aclTensor& a, const aclTensor& b) {
    return a.data == b.data && a.offset == b.offset && aclDataTypeSize(a.dtype) == aclDataTypeSize(b.dtype) &&
           a.view_dims == b.view_dims && a.strides == b.strides;
}

// Whether two elements of the view may be one memory location: a stride 0 along a
// dimension of several elements, or a stride smaller than the extent of the smaller ones.
bool may_overlap_itself(const aclTensor& t) {
    std::pair<int64_t, int64_t> dims[NNPLUG_MAX_DIMS];  // (stride, size) of the dimensions of size > 1
    size_t n = 0;
    for (size_t k = 0; k < t.view_dims.size(); ++k)
        if (t.view_dims[k] > 1) dims[n++] = {t.strides[k], t.view_dims[k]};
    for (size_t k = 1; k < n; ++k)  // insertion sort by stride: at most 8 entries
        for (size_t j = k; j > 0 && dims[j].first < dims[j - 1].first; --j) std::swap(dims[j], dims[j - 1]);
    int64_t extent = 1;  // elements spanned by the dimensions so far
    for (size_t k = 0; k < n; ++k) {
        if (dims[k].first < extent) return true;
        extent = dims[k].first * (dims[k].second - 1) + extent;
    }
    return false;
}

// An output may alias an input only exactly (same view), and must not overlap itself:
// anything else would read values the op has already overwritten.
aclnnStatus Planner::check_overlap() {
    if (iteration_empty()) return ACLNN_SUCCESS;
    for (size_t o = 0; o < count(); ++o) {
        if (!schema_.operands[o].output || tensor(o) == nullptr || ignored(o)) continue;
        const aclTensor& out = *tensor(o);
        if (may_overlap_itself(out)) {
            set_last_error(
                "{}: {} has elements that share memory (shape {}, strides {}); an output must not "
                "overlap itself",
                schema_.api, name(o), shape_string(out.view_dims), shape_string(out.strides));
            return ACLNN_ERR_PARAM_INVALID;
        }
        const ByteRange written = byte_range(out);
        for (size_t i = 0; i < count(); ++i) {
            if (i == o || tensor(i) == nullptr || ignored(i) || tensor(i)->is_empty()) continue;
            const ByteRange read = byte_range(*tensor(i));
            if (read.last < written.first || written.last < read.first) continue;
            if (!schema_.operands[i].output && same_view(out, *tensor(i))) continue;
            set_last_error(
                "{}: {} and {} share memory but are not the same view; an output may only be the "
                "exact same view as an input (elementwise in place)",
                schema_.api, name(o), name(i));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

// Data must exist for what will be read or written.
aclnnStatus Planner::check_data() {
    const bool empty = iteration_empty();
    for (size_t i = 0; i < count(); ++i) {
        const bool used = !empty || (is_reduced(i) && schema_.empty_reduction_written);
        if (used && tensor(i) != nullptr && !ignored(i) && tensor(i)->data == nullptr) {
            set_last_error("{}: {} has no data (tensorData is null)", schema_.api, name(i));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus Planner::check(Check which) {
    switch (which) {
        case Check::kNull:
            return check_null();
        case Check::kRank:
            return check_rank();
        case Check::kDtype:
            return check_dtype();
        case Check::kFormat:
            return check_format();
        case Check::kShape:
            return check_shape();
        case Check::kAttrs:
            return check_attrs();
        case Check::kPromotion:
            return check_promotion();
    }
    return ACLNN_ERR_INNER;
}

// Only called after the dtype check has accepted every operand's dtype.
nnplug_dtype abi_dtype(aclDataType dtype) {
    return abi_dtype_of(dtype).value_or(NNPLUG_DTYPE_F32);
}

void add_attr(nnplug_op_desc& desc, nnplug_attr_key key, int64_t value) {
    nnplug_attr& attr = desc.attrs[desc.attr_count++];
    attr.key = key;
    attr.type = NNPLUG_ATTR_I64;
    attr.value.i64 = value;
}

void add_attr(nnplug_op_desc& desc, nnplug_attr_key key, double value) {
    nnplug_attr& attr = desc.attrs[desc.attr_count++];
    attr.key = key;
    attr.type = NNPLUG_ATTR_F64;
    attr.value.f64 = value;
}

void add_attr(nnplug_op_desc& desc, nnplug_attr_key key, float value) {
    nnplug_attr& attr = desc.attrs[desc.attr_count++];
    attr.key = key;
    attr.type = NNPLUG_ATTR_F32;
    attr.value.f32 = value;
}

void add_attr(nnplug_op_desc& desc, nnplug_attr_key key, bool value) {
    nnplug_attr& attr = desc.attrs[desc.attr_count++];
    attr.key = key;
    attr.type = NNPLUG_ATTR_BOOL;
    attr.value.boolean = value ? 1 : 0;
}

// Every attribute in its own type, then what the runtime derives once, so that no backend
// re-derives the op's semantics.
void Planner::describe_attrs(nnplug_op_desc& desc) const {
    for (size_t a = 0; a < schema_.attrs.size(); ++a) {
        const AttrSpec& spec = schema_.attrs[a];
        const AttrValue& value = call_.attrs[a];
        switch (spec.type) {
            case AttrType::kInt64:
                if (spec.key == NNPLUG_ATTR_REDUCTION && value.i64 == kReductionBatchmean)
                    add_attr(desc, spec.key, int64_t{NNPLUG_REDUCTION_MEAN});  // over self's first dim
                else if (!(spec.negative_ignores_nothing && value.i64 < 0))
                    add_attr(desc, spec.key, value.i64);
                break;
            case AttrType::kDouble:
                add_attr(desc, spec.key, value.f64);
                break;
            case AttrType::kFloat:
                add_attr(desc, spec.key, static_cast<float>(value.f64));
                break;
            case AttrType::kBool:
                add_attr(desc, spec.key, value.boolean);
                break;
            case AttrType::kReductionWord:
                add_attr(desc, spec.key, reduction_of_word(value.word));
                break;
        }
    }
    if (schema_.attr_index(NNPLUG_ATTR_REDUCTION) >= 0 && schema_.mean_count != MeanCount::kWeights) {
        const bool batchmean = reduction() == kReductionBatchmean;
        const int64_t n = batchmean ? (self_->view_dims.empty() ? 1 : self_->view_dims[0])
                          : schema_.mean_count == MeanCount::kSelf ? self_->element_count()
                                                                   : iteration_count();
        const bool mean = (reduction() == NNPLUG_REDUCTION_MEAN || batchmean) && n > 0;
        add_attr(desc, NNPLUG_ATTR_SCALE, mean ? 1.0 / static_cast<double>(n) : 1.0);
        add_attr(desc, NNPLUG_ATTR_REDUCE_COUNT, n);
    }
    add_attr(desc, NNPLUG_ATTR_PROMOTED_DTYPE, static_cast<int64_t>(abi_dtype(promoted_inputs())));
}

void Planner::describe(nnplug_op_desc& desc) const {
    desc = nnplug_op_desc{};
    desc.struct_size = sizeof(nnplug_op_desc);
    desc.op = schema_.kind;
    desc.class_axis = -1;
    desc.operand_count = static_cast<int32_t>(count());
    for (size_t i = 0; i < count(); ++i) {
        const aclTensor* source = tensor(i);
        if (source == nullptr || ignored(i)) continue;
        nnplug_tensor& operand = desc.operands[i];
        operand.flags = NNPLUG_OPERAND_PRESENT;
        if (schema_.operands[i].output) operand.flags |= NNPLUG_OPERAND_OUTPUT;
        if (is_reduced(i)) operand.flags |= NNPLUG_OPERAND_REDUCED;
        operand.dtype = abi_dtype(source->dtype);
        operand.offset = source->offset;
        operand.data = source->data;
        operand.storage_bytes =
            source->storage_elements * static_cast<int64_t>(aclDataTypeSize(source->dtype));
    }
    describe_attrs(desc);
}

// Lays the operands out along self's dims: self-shaped ones as they are, a target with
// stride 0 along the class axis, a weight (C) with stride 0 along every other dim.
void Planner::plan_class_axis(nnplug_op_desc& desc) const {
    const size_t axis = class_axis();
    const size_t rank = self_->view_dims.size();
    BroadcastPlan plan(self_->view_dims);
    for (size_t i = 0; i < count(); ++i) {
        const aclTensor* t = tensor(i);
        if (t == nullptr || ignored(i) || is_reduced(i)) continue;
        int64_t strides[NNPLUG_MAX_DIMS] = {};
        const ShapeRule rule = schema_.operands[i].shape;
        if (rule == ShapeRule::kClasses) {
            strides[axis] = t->strides[0];
        } else if (rule == ShapeRule::kClassRows || rule == ShapeRule::kClassRowsOrReduced) {
            for (size_t k = 0, j = 0; k < rank; ++k)
                if (k != axis) strides[k] = t->strides[j++];
        } else {
            for (size_t k = 0; k < rank; ++k) strides[k] = t->strides[k];
        }
        plan.add_aligned(strides, desc.operands[i]);
    }
    plan.finish_around(axis, desc);
}

aclnnStatus Planner::run(nnplug_op_desc& desc, bool& empty_self) {
    // Every later check reads self, so the null check always comes first.
    if (schema_.checks.empty() || schema_.checks.front() != Check::kNull) {
        set_last_error("{}: internal error: the op's schema does not check for null tensors first",
                       schema_.api);
        return ACLNN_ERR_INNER;
    }
    for (const Check which : schema_.checks)
        if (const aclnnStatus status = check(which)) return status;
    if (schema_.extra_check != nullptr)
        if (const aclnnStatus status = schema_.extra_check(schema_, call_)) return status;
    if (const aclnnStatus status = check_data()) return status;
    if (const aclnnStatus status = check_overlap()) return status;

    describe(desc);
    empty_self = iteration_empty();
    if (empty_self) return ACLNN_SUCCESS;
    if (has_class_axis()) {
        plan_class_axis(desc);
        return ACLNN_SUCCESS;
    }
    BroadcastPlan plan(iteration());
    for (size_t i = 0; i < count(); ++i)
        if (tensor(i) != nullptr && !is_reduced(i)) plan.add(tensor(i), desc.operands[i]);
    plan.finish(desc);
    return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus plan_op(const OpSchema& schema, const OpCall& call, const DeviceTraits& device,
                    nnplug_op_desc& desc, bool& empty_self) {
    return Planner(schema, call, device).run(desc, empty_self);
}

}  // namespace nnplug
