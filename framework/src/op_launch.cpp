#include "op_launch.h"

#include <memory>

namespace nnplug {

DeviceTraits device_traits(const Runtime& runtime) {
    const auto& plugin = runtime.plugin();
    return {plugin.soc_name(runtime.context()), plugin.dtype_mask(runtime.context())};
}

aclnnStatus prepare_executor(Runtime& runtime, const char* api, const nnplug_op_desc& desc,
                             bool nothing_to_run, uint64_t* workspace_size, aclOpExecutor** executor) {
    const nnplug_plugin& plugin = runtime.plugin();
    const nnplug_op_i* op = nullptr;
    for (size_t i = 0; i < plugin.op_count; ++i)
        if (plugin.ops[i].op == desc.op) op = &plugin.ops[i];
    if (op == nullptr) {
        set_last_error("{}: backend '{}' does not implement this op", api, plugin.name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    uint64_t bytes = 0;
    if (!nothing_to_run) {
        if (op->supports != nullptr) {
            char reason[512] = "";
            if (op->supports(runtime.context(), &desc, reason, sizeof reason) != NNPLUG_OK) {
                set_last_error("{}: {}", api, reason);
                return ACLNN_ERR_PARAM_INVALID;
            }
        }
        if (op->workspace_size(runtime.context(), &desc, &bytes) != NNPLUG_OK) {
            runtime.fail_from_backend(api);
            return ACLNN_ERR_INNER;
        }
    }
    auto created = std::make_unique<aclOpExecutor>();
    created->desc = desc;
    created->op = op;
    created->api = api;
    created->workspace_bytes = bytes;
    created->nothing_to_run = nothing_to_run;
    *executor = runtime.register_executor(std::move(created));
    *workspace_size = bytes;
    return ACLNN_SUCCESS;
}

aclnnStatus run_executor(const char* api, void* workspace, uint64_t workspace_size,
                         aclOpExecutor* executor, aclrtStream stream) {
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
    void* resolved = runtime->resolve_stream(api, stream);
    if (resolved == nullptr) return ACLNN_ERR_PARAM_INVALID;
    if (!executor->nothing_to_run) {
        const nnplug_status status =
            executor->op->launch(runtime->context(), &executor->desc, workspace, workspace_size, resolved);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend(api);
            return status == NNPLUG_ERR_INVALID_ARGUMENT ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_RUNTIME_ERROR;
        }
    }
    runtime->consume(executor);
    return ACLNN_SUCCESS;
}

}  // namespace nnplug
