#include "two_phase.h"

#include <cstdio>
#include <memory>
#include <new>

#include <nnplug/plugin_support.h>

#include "op_planner.h"
#include "runtime.h"

namespace nnplug {
namespace {

const nnplug_op_i* find_op(const nnplug_plugin& plugin, nnplug_op_kind kind) {
    for (size_t i = 0; i < plugin.op_count; ++i)
        if (plugin.ops[i]->op == kind) return plugin.ops[i];
    return nullptr;
}

// Device pointers of one device used while another is current are refused, never used.
aclnnStatus check_operand_devices(const Runtime& runtime, const OpSchema& schema, const nnplug_op_desc& desc) {
    if (!runtime.tracks_memory_owners()) return ACLNN_SUCCESS;
    for (int slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& operand = desc.operands[slot];
        if ((operand.flags & NNPLUG_OPERAND_PRESENT) == 0) continue;
        char what[64];
        std::snprintf(what, sizeof what, "%s data", schema.operands[static_cast<size_t>(slot)].name);
        if (!runtime.check_on_current_device(schema.api, what, operand.data)) return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

// With an empty self, the reduced output of an op that writes a reduction over no
// elements (OpSchema::empty_reduction_written), or -1.
int32_t empty_reduction_slot(const OpSchema& schema, const nnplug_op_desc& desc, bool empty_self) {
    if (!empty_self || !schema.empty_reduction_written) return -1;
    for (int32_t slot = 0; slot < desc.operand_count; ++slot)
        if (desc.operands[slot].flags & NNPLUG_OPERAND_REDUCED) return slot;
    return -1;
}

// A reduction over no elements: the mean is NaN (0/0), the sum 0. The bit patterns are
// static, so an asynchronous copy may read them after the call has returned.
const void* empty_reduction_bits(int64_t reduction, int32_t dtype) {
    static const uint32_t kZero = 0;
    static const uint32_t kNanF32 = 0x7fc00000u;
    static const uint16_t kNanF16 = 0x7e00u;
    static const uint16_t kNanBf16 = 0x7fc0u;
    if (reduction != NNPLUG_REDUCTION_MEAN) return &kZero;
    return dtype == NNPLUG_DTYPE_F16 ? static_cast<const void*>(&kNanF16)
           : dtype == NNPLUG_DTYPE_BF16 ? static_cast<const void*>(&kNanBf16)
                                        : static_cast<const void*>(&kNanF32);
}

// Writes the empty reduction's value into its output, in stream order.
aclnnStatus write_empty_reduction(Runtime& runtime, const aclOpExecutor& executor, void* stream) {
    const nnplug_tensor& out = executor.desc.operands[executor.empty_reduction_slot];
    const size_t bytes = nnplug_dtype_size(out.dtype);
    void* destination = static_cast<char*>(out.data) + out.offset * static_cast<int64_t>(bytes);
    const void* source = empty_reduction_bits(sdk::reduction(executor.desc), out.dtype);
    const nnplug_device_i& device = runtime.device_table();
    nnplug_status status;
    if (device.memcpy_async != nullptr) {
        status = device.memcpy_async(runtime.context(), destination, source, bytes, NNPLUG_MEMCPY_HOST_TO_DEVICE,
                                     stream);
    } else {
        status = device.stream_synchronize(runtime.context(), stream);
        if (status == NNPLUG_OK)
            status = device.memcpy(runtime.context(), destination, source, bytes, NNPLUG_MEMCPY_HOST_TO_DEVICE);
    }
    if (status != NNPLUG_OK) {
        runtime.fail_from_backend(executor.api, status);
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus prepare_executor(Runtime& runtime, const OpSchema& schema, const nnplug_op_desc& desc,
                             bool nothing_to_run, uint64_t* workspace_size, aclOpExecutor** executor) {
    const nnplug_plugin& plugin = runtime.plugin();
    const nnplug_op_i* op = find_op(plugin, schema.kind);
    if (op == nullptr) {
        set_last_error("{}: backend '{}' does not implement this op", schema.api, plugin.name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    auto created = std::make_unique<aclOpExecutor>();
    created->desc = desc;
    created->op = op;
    created->device = runtime.current_device();
    created->api = schema.api;
    created->nothing_to_run = nothing_to_run;
    created->empty_reduction_slot = empty_reduction_slot(schema, desc, nothing_to_run);
    if (created->empty_reduction_slot >= 0) {
        const void* data = desc.operands[created->empty_reduction_slot].data;
        const char* what = schema.operands[static_cast<size_t>(created->empty_reduction_slot)].name;
        if (!runtime.check_on_current_device(schema.api, what, data)) return ACLNN_ERR_PARAM_INVALID;
    }
    if (!nothing_to_run) {
        if (const aclnnStatus status = check_operand_devices(runtime, schema, desc)) return status;
        if (op->supports != nullptr) {
            int32_t refused = -1;
            const nnplug_status status = op->supports(runtime.context(), &desc, &refused);
            if (status != NNPLUG_OK) {
                const char* reason = plugin.last_error(runtime.context());
                const bool named = refused >= 0 && static_cast<size_t>(refused) < schema.operands.size();
                set_last_error("{}: {}{}{}", schema.api, named ? schema.operands[refused].name : "",
                               named ? " " : "", reason && *reason ? reason : "refused by the backend");
                return aclnn_status_from(status);
            }
        }
        const nnplug_status status =
            op->prepare(runtime.context(), &desc, &created->plan, &created->workspace_bytes);
        if (status != NNPLUG_OK) {
            runtime.fail_from_backend(schema.api, status);
            return aclnn_status_from(status);
        }
    }
    *workspace_size = created->workspace_bytes;
    *executor = runtime.register_executor(std::move(created));
    return ACLNN_SUCCESS;
}

aclnnStatus run_executor(const char* api, void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                         aclrtStream stream) {
    RuntimeLease runtime(api);
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    if (const aclnnStatus status = runtime->check_runnable(api, executor)) return status;
    if (workspace_size < executor->workspace_bytes) {
        set_last_error("{}: workspaceSize {} is smaller than the {} bytes the first phase asked for", api,
                       workspace_size, executor->workspace_bytes);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (workspace == nullptr && executor->workspace_bytes > 0) {
        set_last_error("{}: workspace is null but {} bytes were asked for", api, executor->workspace_bytes);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (executor->workspace_bytes > 0 && !runtime->check_on_current_device(api, "workspace", workspace))
        return ACLNN_ERR_PARAM_INVALID;
    void* resolved = runtime->resolve_stream(api, stream);
    if (resolved == nullptr) return ACLNN_ERR_PARAM_INVALID;
    if (const aclnnStatus status = runtime->claim(api, executor)) return status;
    aclnnStatus result = ACLNN_SUCCESS;
    if (executor->empty_reduction_slot >= 0) {
        result = write_empty_reduction(*runtime, *executor, resolved);
    } else if (!executor->nothing_to_run) {
        const nnplug_status status = executor->op->launch(runtime->context(), executor->plan, &executor->desc,
                                                          workspace, workspace_size, resolved);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend(api, status);
            result = status == NNPLUG_ERR_INVALID_ARGUMENT ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_RUNTIME_ERROR;
        }
    }
    runtime->finish_run(executor);
    return result;
}

}  // namespace

aclnnStatus first_phase(const OpSchema& schema, std::initializer_list<const aclTensor*> tensors,
                        std::initializer_list<int64_t> attrs, uint64_t* workspace_size,
                        aclOpExecutor** executor) noexcept {
    try {
        RuntimeLease runtime(schema.api);
        if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
        if (workspace_size == nullptr || executor == nullptr) {
            set_last_error("{}: {} is null", schema.api, workspace_size == nullptr ? "workspaceSize" : "executor");
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        if (tensors.size() != schema.operands.size() || attrs.size() != schema.attrs.size()) {
            set_last_error("{}: internal error: the entry point passes {} tensors and {} attributes, its schema "
                           "has {} and {}",
                           schema.api, tensors.size(), attrs.size(), schema.operands.size(), schema.attrs.size());
            return ACLNN_ERR_INNER;
        }
        const nnplug_plugin& plugin = runtime->plugin();
        const DeviceTraits device{plugin.soc_name(runtime->context()), plugin.dtype_mask(runtime->context())};
        const OpCall call{tensors.begin(), attrs.begin()};
        nnplug_op_desc desc;
        bool empty_self = false;
        if (const aclnnStatus status = plan_op(schema, call, device, desc, empty_self)) return status;
        return prepare_executor(*runtime, schema, desc, empty_self, workspace_size, executor);
    } catch (const std::bad_alloc&) {
        set_last_error("{}: out of host memory", schema.api);
        return ACLNN_ERR_INNER;
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", schema.api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

aclnnStatus second_phase(const OpSchema& schema, void* workspace, uint64_t workspace_size,
                         aclOpExecutor* executor, aclrtStream stream) noexcept {
    try {
        return run_executor(schema.api, workspace, workspace_size, executor, stream);
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", schema.api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

}  // namespace nnplug
