#include "op_catalog.h"

#include <nnplug/op_schema.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace nnplug::conformance {
namespace {

SchemaRules derive(const OpUnderTest& op) {
    const nnplug_op_schema& schema = published_schema(op);
    const auto slot = [&op](const std::string& role) {
        const auto found = std::find(op.operands.begin(), op.operands.end(), role);
        return found == op.operands.end() ? -1 : static_cast<int>(found - op.operands.begin());
    };
    const int self = slot("self"), target = slot("target"), out = slot(op.output);
    SchemaRules rules;
    rules.reducing = schema.operands[out].shape == NNPLUG_SHAPE_ITERATION_OR_REDUCED;
    rules.reduced_zero_d_only = schema.reduced_shape == NNPLUG_REDUCED_SCALAR;
    rules.out_dtype_is_target = target >= 0 && schema.operands[out].dtype_of == target;
    rules.checks_format = target >= 0 && schema.operands[target].same_format;
    rules.mean_over_self = schema.mean_count == NNPLUG_MEAN_OVER_SELF;
    rules.bit_exact = schema.promise == NNPLUG_PROMISE_CANONICAL_BITS;
    rules.canonical_order = schema.promise == NNPLUG_PROMISE_CANONICAL_ORDER;
    rules.inputs_share_dtype = true;
    for (size_t i = 0; i < schema.operand_count; ++i) {
        const nnplug_operand_schema& operand = schema.operands[i];
        rules.broadcasts_mutually |= operand.shape == NNPLUG_SHAPE_BROADCASTS_MUTUALLY;
        if (!operand.output && static_cast<int>(i) != self)
            rules.inputs_share_dtype &= operand.dtype_of == self;
        rules.optional.push_back(operand.optional != 0);
        rules.rounded_to_promoted.push_back(operand.rounded_to_promoted != 0);
    }
    for (size_t a = 0; a < schema.attr_count; ++a) {
        rules.attr_types.push_back(schema.attrs[a].type);
        if (schema.attrs[a].key == NNPLUG_ATTR_REDUCTION) rules.max_reduction = schema.attrs[a].max;
    }
    return rules;
}

}  // namespace

const nnplug_op_schema& published_schema(const OpUnderTest& op) {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema* schema = nnplug_op_schema_at(i);
        if (std::strcmp(schema->api, op.api) == 0) {
            if (schema->operand_count != op.operands.size())
                throw std::logic_error(std::string(op.api) + ": the kit's entry and the published schema " +
                                       "have different operands");
            return *schema;
        }
    }
    throw std::logic_error(std::string(op.api) + " has no published schema");
}

std::vector<AttrArg> call_attrs(const OpUnderTest& op, int64_t reduction, size_t set) {
    std::vector<AttrArg> attrs = {reduction};
    if (!op.kit.attr_sets.empty()) {
        const auto& rest = op.kit.attr_sets[set % op.kit.attr_sets.size()];
        attrs.insert(attrs.end(), rest.begin(), rest.end());
    }
    return attrs;
}

AttrArg AttrArg::parse(int32_t type, const std::string& text) {
    size_t used = 0;
    AttrArg arg;
    if (type == NNPLUG_ATTR_ARG_DOUBLE || type == NNPLUG_ATTR_ARG_FLOAT) {
        const double value = std::stod(text, &used);
        arg = type == NNPLUG_ATTR_ARG_FLOAT ? float32(static_cast<float>(value)) : real(value);
    } else if (type == NNPLUG_ATTR_ARG_BOOL && (text == "0" || text == "1")) {
        arg = boolean(text == "1");
        used = 1;
    } else if (type == NNPLUG_ATTR_ARG_INT64) {
        arg = int64(std::stoll(text, &used));
    }
    if (used == 0 || used != text.size())
        throw std::invalid_argument("'" + text + "' is not an attribute of type " + std::to_string(type));
    return arg;
}

bool SchemaRules::rounds_to_promoted() const {
    return std::find(rounded_to_promoted.begin(), rounded_to_promoted.end(), true) !=
           rounded_to_promoted.end();
}

const std::vector<OpUnderTest>& all_ops() {
    static const std::vector<OpUnderTest> ops = [] {
        std::vector<OpUnderTest> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "conformance_op_sources.inc"
#undef NNPLUG_OP_SOURCE
        for (OpUnderTest& op : all) op.schema = derive(op);
        return all;
    }();
    return ops;
}

const std::vector<OpUnderTest>& op_catalog() {
    static const std::vector<OpUnderTest> ops = [] {
        std::vector<OpUnderTest> elementwise;
        for (const OpUnderTest& op : all_ops())
            if (op.class_kit == nullptr) elementwise.push_back(op);
        return elementwise;
    }();
    return ops;
}

const OpUnderTest& op_named(const std::string& name) {
    for (const OpUnderTest& op : all_ops())
        if (op.name == name) return op;
    throw std::out_of_range("no op called '" + name + "' in the test catalog");
}

aclnnStatus run_executor(aclnnStatus first, uint64_t workspace_size, aclOpExecutor* executor,
                         aclnnStatus (*second_phase)(void*, uint64_t, aclOpExecutor*, aclrtStream),
                         aclrtStream stream) {
    if (first != ACLNN_SUCCESS) return first;
    void* workspace = nullptr;
    if (workspace_size > 0 &&
        aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(executor);
        return ACLNN_ERR_INNER;
    }
    aclnnStatus status = second_phase(workspace, workspace_size, executor, stream);
    if (status == ACLNN_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS)
        status = ACLNN_ERR_RUNTIME_ERROR;
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

aclnnStatus run_op(const OpUnderTest& op, const std::vector<const aclTensor*>& tensors,
                   const std::vector<AttrArg>& attrs, aclrtStream stream) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = op.first_phase(tensors, attrs, &workspace_size, &executor);
    return run_executor(first, workspace_size, executor, op.second_phase, stream);
}

}  // namespace nnplug::conformance
