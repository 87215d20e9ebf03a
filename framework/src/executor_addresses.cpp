#include "executor_addresses.h"

#include <exception>

#include "error_state.h"
#include "op_schema.h"
#include "operand_memory.h"
#include "runtime.h"
#include "tensor.h"

namespace nnplug {
namespace {

// The slot of the index-th operand of `group` (the inputs in signature order, then the
// outputs), or -1; `count` is how many the group has.
int slot_of(const OpSchema& schema, OperandGroup group, size_t index, size_t& count) {
    int found = -1;
    count = 0;
    for (const bool outputs : {false, true}) {
        if ((outputs && group == OperandGroup::kInputs) || (!outputs && group == OperandGroup::kOutputs))
            continue;
        for (size_t slot = 0; slot < schema.operands.size(); ++slot)
            if (schema.operands[slot].output == outputs && count++ == index) found = static_cast<int>(slot);
    }
    return found;
}

const char* group_word(OperandGroup group) {
    return group == OperandGroup::kInputs ? "input" : group == OperandGroup::kOutputs ? "output" : "tensor";
}

// The backend's own refusal of the moved operands (atlas_emu: memory that is not its
// device's), as the first phase asks it.
aclnnStatus check_backend_takes(Runtime& runtime, const char* api, const aclOpExecutor& executor) {
    if (executor.op->supports == nullptr) return ACLNN_SUCCESS;
    int32_t refused = -1;
    const nnplug_status status = executor.op->supports(executor.context, &executor.desc, &refused);
    if (status == NNPLUG_OK) return ACLNN_SUCCESS;
    const nnplug_plugin& plugin = executor.routed != nullptr ? executor.routed->plugin() : runtime.plugin();
    const char* text = plugin.last_error(executor.context);
    const auto& operands = executor.schema->operands;
    const bool named = refused >= 0 && static_cast<size_t>(refused) < operands.size();
    set_last_error("{}: {}{}{}", api, named ? operands[static_cast<size_t>(refused)].name : "",
                   named ? " " : "", text && *text ? text : "refused by the backend");
    return aclnn_status_from(status);
}

// The checks the first phase makes of one operand's address, over the executor's
// descriptor with the moved slot's new address in place (the others were checked when they
// were given). Overlap with the other operands waits for the next run (aclOpExecutor::moved).
aclnnStatus check_address(Runtime& runtime, const char* api, const aclOpExecutor& executor, int slot) {
    const OpSchema& schema = *executor.schema;
    const nnplug_op_desc& desc = executor.desc;
    if (const aclnnStatus status = check_operand_devices(runtime, api, schema, desc, slot)) return status;
    if (const aclnnStatus status = check_operand_extents(runtime, api, schema, desc, slot)) return status;
    if (executor.nothing_to_run) return ACLNN_SUCCESS;  // nothing is read: the backend is not asked
    return check_backend_takes(runtime, api, executor);
}

aclnnStatus move_operand(Runtime& runtime, const char* api, OperandGroup group, aclOpExecutor& executor,
                         size_t index, aclTensor* tensor, void* addr) {
    const OpSchema& schema = *executor.schema;
    size_t count = 0;
    const int slot = slot_of(schema, group, index, count);
    const char* word = group_word(group);
    if (slot < 0) {
        set_last_error("{}: index {} is past the {} {}s of {}", api, index, count, word, schema.api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    const char* name = schema.operands[static_cast<size_t>(slot)].name;
    if (executor.tensors[slot] == nullptr) {
        set_last_error("{}: {} {} ({}) was null in {}GetWorkspaceSize; it has no address to set", api, word,
                       index, name, schema.api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor.tensors[slot] != tensor) {
        set_last_error("{}: tensor {} is not {} {} ({}), the aclTensor {}GetWorkspaceSize was given", api,
                       static_cast<const void*>(tensor), word, index, name, schema.api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    const aclTensor* const held_tensor = tensor;
    const TensorHold hold(&held_tensor, 1);  // not freed by a racing aclDestroyTensor while written
    if (!hold.held(0)) {
        set_last_error("{}: tensor {} ({}) is destroyed", api, static_cast<const void*>(tensor), name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    nnplug_tensor& operand = executor.desc.operands[slot];
    const bool described = (operand.flags & NNPLUG_OPERAND_PRESENT) != 0;  // not an ignored operand
    if (described && operand.data != addr) {
        if (addr == nullptr && operand.data != nullptr) {
            set_last_error("{}: addr is null, but {} has data the op reads or writes", api, name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        void* const before = operand.data;
        operand.data = addr;
        if (const aclnnStatus status = check_address(runtime, api, executor, slot)) {
            operand.data = before;  // refused: the executor runs as it did
            return status;
        }
        executor.moved = true;
    }
    tensor->data = addr;
    return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus set_tensor_address(const char* api, OperandGroup group, aclOpExecutor* executor, size_t index,
                               aclTensor* tensor, void* addr) noexcept {
    try {
        RuntimeLease runtime(api);
        if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
        if (executor == nullptr || tensor == nullptr) {
            set_last_error("{}: {} is null", api, executor == nullptr ? "executor" : "tensor");
            return ACLNN_ERR_INNER_NULLPTR;
        }
        return runtime->change_idle_repeatable(api, executor, [&](aclOpExecutor& live) {
            return move_operand(*runtime, api, group, live, index, tensor, addr);
        });
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

}  // namespace nnplug
