#include "op_planner.h"

#include <optional>
#include <string>
#include <utility>

#include "broadcast_plan.h"
#include "error_state.h"
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

std::optional<nnplug_dtype> computable_dtype(aclDataType dtype) {
    switch (dtype) {
        case ACL_FLOAT:
            return NNPLUG_DTYPE_F32;
        case ACL_FLOAT16:
            return NNPLUG_DTYPE_F16;
        case ACL_BF16:
            return NNPLUG_DTYPE_BF16;
        default:
            return std::nullopt;
    }
}

// PyTorch's promotion for the floating types: equal types stay, anything else is float32.
aclDataType promote(aclDataType a, aclDataType b) {
    return a == b ? a : ACL_FLOAT;
}

bool is_floating(aclDataType dtype) {
    return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE;
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
    bool reduces() const {
        const int index = schema_.attr_index(NNPLUG_ATTR_REDUCTION);
        return index >= 0 && call_.attrs[index] != NNPLUG_REDUCTION_NONE;
    }
    bool is_reduced(size_t slot) const {
        return schema_.operands[slot].shape == ShapeRule::kIterationOrReduced && reduces();
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
    aclnnStatus check_format();
    aclnnStatus plan_iteration();
    aclnnStatus check_output_shapes(bool empty);
    aclnnStatus check_shape();
    aclnnStatus check_attrs();
    aclnnStatus check_promotion();
    aclDataType promoted_inputs() const;
    aclnnStatus check_overlap();
    aclnnStatus check_data();
    void describe(nnplug_op_desc& desc) const;

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

aclnnStatus Planner::check_rank() {
    for (size_t i = 0; i < count(); ++i) {
        if (tensor(i) != nullptr && tensor(i)->view_dims.size() > NNPLUG_MAX_DIMS) {
            set_last_error("{}: {} has {} dimensions; at most {} are supported", schema_.api, name(i),
                           tensor(i)->view_dims.size(), NNPLUG_MAX_DIMS);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus Planner::check_dtype() {
    for (size_t i = 0; i < count(); ++i) {
        if (tensor(i) == nullptr) continue;
        const auto dtype = computable_dtype(tensor(i)->dtype);
        if (!dtype) {
            set_last_error("{}: {} has dtype {}; expected float32, float16 or bfloat16", schema_.api, name(i),
                           dtype_name(tensor(i)->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if ((device_.dtype_mask & NNPLUG_DTYPE_BIT(*dtype)) == 0) {
            set_last_error("{}: {} has dtype {}, which SoC {} does not support", schema_.api, name(i),
                           dtype_name(tensor(i)->dtype), device_.soc_name);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    for (size_t i = 0; i < count(); ++i) {
        const int other = schema_.operands[i].dtype_of;
        if (other < 0 || tensor(i) == nullptr || tensor(other) == nullptr) continue;
        if (tensor(i)->dtype != tensor(other)->dtype) {
            set_last_error("{}: {} has dtype {} but {} has dtype {}; they must be equal", schema_.api,
                           name(i), dtype_name(tensor(i)->dtype), name(other),
                           dtype_name(tensor(other)->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
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

aclnnStatus Planner::check_attrs() {
    for (size_t a = 0; a < schema_.attrs.size(); ++a) {
        const AttrSpec& spec = schema_.attrs[a];
        if (call_.attrs[a] < spec.min || call_.attrs[a] > spec.max) {
            set_last_error("{}: {} {} is not {}", schema_.api, spec.name, call_.attrs[a], spec.range);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
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
        if (!schema_.operands[o].output || tensor(o) == nullptr) continue;
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
            if (i == o || tensor(i) == nullptr || tensor(i)->is_empty()) continue;
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
        if (used && tensor(i) != nullptr && tensor(i)->data == nullptr) {
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

nnplug_dtype abi_dtype(aclDataType dtype) {
    return dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16 : dtype == ACL_BF16 ? NNPLUG_DTYPE_BF16 : NNPLUG_DTYPE_F32;
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

void Planner::describe(nnplug_op_desc& desc) const {
    desc = nnplug_op_desc{};
    desc.struct_size = sizeof(nnplug_op_desc);
    desc.op = schema_.kind;
    desc.operand_count = static_cast<int32_t>(count());
    for (size_t i = 0; i < count(); ++i) {
        const aclTensor* source = tensor(i);
        if (source == nullptr) continue;
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
    for (size_t a = 0; a < schema_.attrs.size(); ++a) add_attr(desc, schema_.attrs[a].key, call_.attrs[a]);
    // Derived once here, so that no backend re-derives the op's semantics.
    if (const int index = schema_.attr_index(NNPLUG_ATTR_REDUCTION); index >= 0) {
        const int64_t n = schema_.mean_count == MeanCount::kSelf ? self_->element_count() : iteration_count();
        const bool mean = call_.attrs[index] == NNPLUG_REDUCTION_MEAN && n > 0;
        add_attr(desc, NNPLUG_ATTR_SCALE, mean ? 1.0 / static_cast<double>(n) : 1.0);
        add_attr(desc, NNPLUG_ATTR_REDUCE_COUNT, n);
    }
    add_attr(desc, NNPLUG_ATTR_PROMOTED_DTYPE, static_cast<int64_t>(abi_dtype(promoted_inputs())));
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
