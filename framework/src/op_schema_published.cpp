// nnplug/op_schema.h: the registered OpSchemas as plain C data, built once on first use
// from the schemas the runtime checks calls against (no second copy of any rule).
#include <nnplug/op_schema.h>

#include <algorithm>
#include <memory>

#include "error_state.h"
#include "op_schema.h"
#include "two_phase.h"

namespace nnplug {
namespace {

std::vector<const OpSchema*>& registry() {
    static std::vector<const OpSchema*> schemas;
    return schemas;
}

// One op's C view and the arrays it points into.
struct PublishedOp {
    std::vector<nnplug_operand_schema> operands;
    std::vector<nnplug_attr_schema> attrs;
    std::vector<nnplug_check> checks;
    std::vector<nnplug_dtype_step> dtype_steps;
    nnplug_op_schema view{};
    const OpSchema* schema = nullptr;
};

std::unique_ptr<PublishedOp> publish(const OpSchema& schema) {
    auto op = std::make_unique<PublishedOp>();
    op->schema = &schema;
    for (const OperandSpec& spec : schema.operands)
        op->operands.push_back({spec.name, spec.output, spec.optional,
                                static_cast<nnplug_shape_rule>(spec.shape), spec.same_format, spec.promotes,
                                spec.dtype_of, spec.rounded_to_promoted, spec.allowed, spec.ranks,
                                static_cast<nnplug_empty_value>(spec.empty_value)});
    for (const AttrSpec& spec : schema.attrs)
        op->attrs.push_back({spec.name, spec.key, spec.min, spec.max, spec.range,
                             static_cast<nnplug_attr_arg_type>(spec.type), spec.min_real, spec.max_real,
                             spec.negative_ignores_nothing});
    for (const Check check : schema.checks) op->checks.push_back(static_cast<nnplug_check>(check));
    for (const DtypeStep step : schema.dtype_steps)
        op->dtype_steps.push_back({step.slot, static_cast<nnplug_dtype_rule>(step.rule)});
    op->view = {schema.kind,
                schema.api,
                op->operands.size(),
                op->operands.data(),
                op->attrs.size(),
                op->attrs.data(),
                op->checks.size(),
                op->checks.data(),
                schema.empty_reduction_written,
                static_cast<nnplug_reduced_shape>(schema.reduced_shape),
                static_cast<nnplug_mean_count>(schema.mean_count),
                schema.extra_check != nullptr,
                static_cast<nnplug_numeric_promise>(schema.promise),
                static_cast<nnplug_class_axis>(schema.class_axis),
                schema.gradient_of,
                schema.attr_status,
                op->dtype_steps.size(),
                op->dtype_steps.data()};
    return op;
}

const std::vector<std::unique_ptr<PublishedOp>>& published() {
    static const std::vector<std::unique_ptr<PublishedOp>> ops = [] {
        std::vector<std::unique_ptr<PublishedOp>> all;
        for (const OpSchema* schema : registry()) all.push_back(publish(*schema));
        std::stable_sort(all.begin(), all.end(),
                         [](const auto& a, const auto& b) { return a->view.kind < b->view.kind; });
        return all;
    }();
    return ops;
}

// An attribute argument as the entry point would pass it; false for a type it cannot be.
bool attr_value_of(const nnplug_attr_arg& arg, std::vector<AttrValue>& values) {
    switch (arg.type) {
        case NNPLUG_ATTR_ARG_INT64:
            values.emplace_back(arg.i);
            return true;
        case NNPLUG_ATTR_ARG_DOUBLE:
            values.emplace_back(arg.f);
            return true;
        case NNPLUG_ATTR_ARG_FLOAT:
            values.emplace_back(static_cast<float>(arg.f));
            return true;
        case NNPLUG_ATTR_ARG_BOOL:
            values.emplace_back(arg.b != 0);
            return true;
        case NNPLUG_ATTR_ARG_REDUCTION_WORD:
            values.emplace_back(arg.word);
            return true;
    }
    return false;
}

// The call by schema: the op's own first phase once the attributes have their declared types.
aclnnStatus call_by_schema(const nnplug_op_schema* op, const aclTensor* const* tensors,
                           const nnplug_attr_arg* attrs, uint64_t* workspace_size, aclOpExecutor** executor) {
    const auto& ops = published();
    const auto found = std::find_if(ops.begin(), ops.end(), [op](const auto& p) { return &p->view == op; });
    if (found == ops.end()) {
        set_last_error("nnplug_op_get_workspace_size: op is {}",
                       op == nullptr ? "null" : "not a published schema");
        return op == nullptr ? ACLNN_ERR_PARAM_NULLPTR : ACLNN_ERR_PARAM_INVALID;
    }
    const OpSchema& schema = *(*found)->schema;
    if ((tensors == nullptr && !schema.operands.empty()) || (attrs == nullptr && !schema.attrs.empty())) {
        set_last_error("{}: {} is null", schema.api, tensors == nullptr ? "tensors" : "attrs");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::vector<AttrValue> values;
    for (size_t a = 0; a < schema.attrs.size(); ++a) {
        const bool converted = attr_value_of(attrs[a], values);
        if (!converted || attrs[a].type != static_cast<nnplug_attr_arg_type>(schema.attrs[a].type)) {
            set_last_error("{}: attribute {} ({}) is given as type {}, its schema declares type {}",
                           schema.api, a, schema.attrs[a].name, static_cast<int>(attrs[a].type),
                           static_cast<int>(schema.attrs[a].type));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return first_phase(schema, tensors, schema.operands.size(), values.data(), values.size(), workspace_size,
                       executor);
}

}  // namespace

SchemaRegistration::SchemaRegistration(const OpSchema& schema) {
    registry().push_back(&schema);
}

const std::vector<const OpSchema*>& registered_schemas() {
    return registry();
}

}  // namespace nnplug

extern "C" {

size_t nnplug_op_schema_count(void) {
    return nnplug::published().size();
}

const nnplug_op_schema* nnplug_op_schema_at(size_t i) {
    const auto& ops = nnplug::published();
    return i < ops.size() ? &ops[i]->view : nullptr;
}

aclnnStatus nnplug_op_get_workspace_size(const nnplug_op_schema* op, const aclTensor* const* tensors,
                                         const nnplug_attr_arg* attrs, uint64_t* workspaceSize,
                                         aclOpExecutor** executor) {
    try {
        return nnplug::call_by_schema(op, tensors, attrs, workspaceSize, executor);
    } catch (const std::bad_alloc&) {
        nnplug::set_last_error("nnplug_op_get_workspace_size: out of host memory");
        return ACLNN_ERR_INNER;
    }
}

}  // extern "C"
