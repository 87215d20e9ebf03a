#include "bce_plan.h"

#include <array>
#include <optional>

#include "broadcast_plan.h"
#include "error_state.h"
#include "tensor.h"

namespace nnplug {
namespace {

struct NamedTensor {
    const char* name;
    const aclTensor* tensor;
};

std::optional<nnplug_dtype> computable_dtype(aclDataType dtype) {
    switch (dtype) {
    case ACL_FLOAT: return NNPLUG_DTYPE_F32;
    case ACL_FLOAT16: return NNPLUG_DTYPE_F16;
    case ACL_BF16: return NNPLUG_DTYPE_BF16;
    default: return std::nullopt;
    }
}

// PyTorch's promotion for the floating types: equal types stay, anything else is float32.
aclDataType promote(aclDataType a, aclDataType b) { return a == b ? a : ACL_FLOAT; }

bool is_floating(aclDataType dtype) {
    return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE;
}

bool out_shape_ok(const BceCall& call) {
    const auto& out = call.out->view_dims;
    if (call.op == NNPLUG_OP_BCE_FORWARD && call.reduction != NNPLUG_REDUCTION_NONE)
        return out.empty() || (out.size() == 1 && out[0] == 1);
    return out == call.self->view_dims;
}

}  // namespace

aclnnStatus plan_bce(const BceCall& call, const DeviceTraits& device, nnplug_op_desc& desc, bool& empty_self) {
    const bool backward = call.op == NNPLUG_OP_BCE_BACKWARD;
    const std::array<NamedTensor, 5> all = {{{"gradOutput", call.grad_output},
                                             {"self", call.self},
                                             {"target", call.target},
                                             {backward ? "weightOptional" : "weight", call.weight},
                                             {"out", call.out}}};
    const auto used = [&](const NamedTensor& t) { return t.tensor != nullptr; };

    // 1. null pointers (weight is optional; gradOutput exists only for the backward)
    for (size_t i = 0; i < all.size(); ++i) {
        const bool optional = i == 3 || (i == 0 && !backward);
        if (all[i].tensor == nullptr && !optional) {
            set_last_error("{}: {} is null", call.api, all[i].name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    // 2. rank
    for (const auto& t : all) {
        if (used(t) && t.tensor->view_dims.size() > NNPLUG_MAX_DIMS) {
            set_last_error("{}: {} has {} dimensions; at most {} are supported", call.api, t.name,
                           t.tensor->view_dims.size(), NNPLUG_MAX_DIMS);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    // 3. dtypes, and the device's own dtype rule
    for (const auto& t : all) {
        if (!used(t)) continue;
        const auto dtype = computable_dtype(t.tensor->dtype);
        if (!dtype) {
            set_last_error("{}: {} has dtype {}; expected float32, float16 or bfloat16", call.api, t.name,
                           dtype_name(t.tensor->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if ((device.dtype_mask & NNPLUG_DTYPE_BIT(*dtype)) == 0) {
            set_last_error("{}: {} has dtype {}, which SoC {} does not support", call.api, t.name,
                           dtype_name(t.tensor->dtype), device.soc_name);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    // 4. formats of self, target and weight agree
    for (const auto* t : {&all[2], &all[3]}) {
        if (used(*t) && t->tensor->format != call.self->format) {
            set_last_error("{}: {} has format {} but self has format {}", call.api, t->name,
                           format_name(t->tensor->format), format_name(call.self->format));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    // 5. shapes (an empty self skips them)
    empty_self = call.self->is_empty();
    if (!empty_self) {
        const auto& self_shape = call.self->view_dims;
        if (!out_shape_ok(call)) {
            const bool reducing = !backward && call.reduction != NNPLUG_REDUCTION_NONE;
            set_last_error("{}: out shape {} must be {}", call.api, shape_string(call.out->view_dims),
                           reducing ? std::string("[] or [1] for a reduced loss") : "self's shape " + shape_string(self_shape));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (!backward && call.target->view_dims != self_shape) {
            set_last_error("{}: target shape {} must equal self shape {}", call.api,
                           shape_string(call.target->view_dims), shape_string(self_shape));
            return ACLNN_ERR_PARAM_INVALID;
        }
        for (const auto& t : {all[0], all[2], all[3]}) {
            if (used(t) && !broadcasts_to(t.tensor->view_dims, self_shape)) {
                set_last_error("{}: {} shape {} cannot broadcast to self shape {}", call.api, t.name,
                               shape_string(t.tensor->view_dims), shape_string(self_shape));
                return ACLNN_ERR_PARAM_INVALID;
            }
        }
    }
    // 6. reduction
    if (call.reduction < NNPLUG_REDUCTION_NONE || call.reduction > NNPLUG_REDUCTION_SUM) {
        set_last_error("{}: reduction {} is not 0 (none), 1 (mean) or 2 (sum)", call.api, call.reduction);
        return ACLNN_ERR_PARAM_INVALID;
    }
    // 7. promotion of the inputs, castable to out
    aclDataType promoted = call.self->dtype;
    for (const auto& t : {all[0], all[2], all[3]})
        if (used(t)) promoted = promote(promoted, t.tensor->dtype);
    if (!is_floating(promoted) || !is_floating(call.out->dtype)) {
        set_last_error("{}: the inputs promote to {}, which cannot be cast to out's {}", call.api,
                       dtype_name(promoted), dtype_name(call.out->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    // Data must exist for what will be read or written.
    if (!empty_self) {
        for (const auto& t : all) {
            if (used(t) && t.tensor->data == nullptr) {
                set_last_error("{}: {} has no data (tensorData is null)", call.api, t.name);
                return ACLNN_ERR_PARAM_NULLPTR;
            }
        }
    }

    desc = nnplug_op_desc{};
    desc.struct_size = sizeof(nnplug_op_desc);
    desc.op = call.op;
    desc.reduction = static_cast<int32_t>(call.reduction);
    desc.reduce_count = call.self->element_count();
    describe_operand(call.grad_output, desc.grad_output);
    describe_operand(call.self, desc.self);
    describe_operand(call.target, desc.target);
    describe_operand(call.weight, desc.weight);
    describe_operand(call.out, desc.out);
    if (empty_self) return ACLNN_SUCCESS;

    BroadcastPlan plan(call.self->view_dims);
    if (backward) plan.add(call.grad_output, desc.grad_output);
    plan.add(call.self, desc.self);
    plan.add(call.target, desc.target);
    plan.add(call.weight, desc.weight);
    const bool reduced_out = !backward && call.reduction != NNPLUG_REDUCTION_NONE;
    if (!reduced_out) plan.add(call.out, desc.out);
    plan.finish(desc);
    return ACLNN_SUCCESS;
}

}  // namespace nnplug
