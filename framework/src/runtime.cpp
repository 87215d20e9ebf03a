#include "runtime.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "logging.h"

namespace nnplug {

Runtime::Runtime(RuntimeConfig config, PluginLibrary library, void* context, void* default_stream)
    : config_(std::move(config)), library_(std::move(library)), context_(context),
      default_stream_(default_stream) {}

Runtime::~Runtime() {
    const auto& table = plugin();
    for (void* stream : streams_) table.device.stream_destroy(context_, stream);
    table.device.stream_destroy(context_, default_stream_);
    for (aclOpExecutor* executor : live_executors_) delete executor;
    for (aclOpExecutor* executor : consumed_executors_) delete executor;
    for (void* pointer : host_allocations_) std::free(pointer);
    table.destroy(context_);
}

void Runtime::fail_from_backend(const char* api) {
    const char* reason = plugin().last_error(context_);
    set_last_error("{}: {}", api, reason && *reason ? reason : "the backend failed without a message");
}

void* Runtime::resolve_stream(const char* api, aclrtStream stream) {
    if (stream == nullptr) return default_stream_;
    std::lock_guard lock(streams_mutex_);
    if (streams_.count(stream) == 0) {
        set_last_error("{}: stream {} was not created by aclrtCreateStream or is destroyed", api, stream);
        return nullptr;
    }
    return stream;
}

aclError Runtime::create_stream(aclrtStream* stream) {
    void* created = nullptr;
    const nnplug_status status = plugin().device.stream_create(context_, &created);
    if (status != NNPLUG_OK) {
        fail_from_backend("aclrtCreateStream");
        return acl_error_from(status);
    }
    std::lock_guard lock(streams_mutex_);
    streams_.insert(created);
    *stream = created;
    return ACL_SUCCESS;
}

aclError Runtime::destroy_stream(aclrtStream stream) {
    {
        std::lock_guard lock(streams_mutex_);
        if (stream == nullptr || streams_.erase(stream) == 0) {
            set_last_error("aclrtDestroyStream: stream {} was not created by aclrtCreateStream or is "
                           "already destroyed",
                           stream);
            return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        }
    }
    const nnplug_status status = plugin().device.stream_destroy(context_, stream);
    if (status != NNPLUG_OK) {
        fail_from_backend("aclrtDestroyStream");
        return acl_error_from(status);
    }
    return ACL_SUCCESS;
}

aclError Runtime::malloc_host(void** pointer, size_t bytes) {
    constexpr size_t kAlignment = 64;
    void* allocated = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (allocated == nullptr) {
        set_last_error("aclrtMallocHost: cannot allocate {} bytes of host memory", bytes);
        return ACL_ERROR_BAD_ALLOC;
    }
    std::lock_guard lock(host_mutex_);
    host_allocations_.insert(allocated);
    *pointer = allocated;
    return ACL_SUCCESS;
}

aclError Runtime::free_host(void* pointer) {
    {
        std::lock_guard lock(host_mutex_);
        if (host_allocations_.erase(pointer) == 0) {
            set_last_error("aclrtFreeHost: {} was not allocated by aclrtMallocHost or is already freed",
                           pointer);
            return ACL_ERROR_INVALID_PARAM;
        }
    }
    std::free(pointer);
    return ACL_SUCCESS;
}

aclOpExecutor* Runtime::register_executor(std::unique_ptr<aclOpExecutor> executor) {
    std::lock_guard lock(executors_mutex_);
    live_executors_.insert(executor.get());
    return executor.release();
}

aclnnStatus Runtime::check_runnable(const char* api, aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("{}: executor is null", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.count(executor) == 0) {
        if (consumed_executors_.count(executor) != 0)
            set_last_error("{}: executor {} was consumed by its one run; make it repeatable with "
                           "aclSetAclOpExecutorRepeatable to run it again",
                           api, static_cast<void*>(executor));
        else
            set_last_error("{}: executor {} is not a live executor (never created, or destroyed)", api,
                           static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (std::string_view(executor->api) != api) {
        set_last_error("{}: executor was made by {}GetWorkspaceSize, not {}GetWorkspaceSize", api,
                       executor->api, api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

void Runtime::consume(aclOpExecutor* executor) {
    std::lock_guard lock(executors_mutex_);
    if (executor->repeatable || live_executors_.erase(executor) == 0) return;
    consumed_executors_.insert(executor);
    consumed_order_.push_back(executor);
    if (consumed_order_.size() > kConsumedKept) {
        aclOpExecutor* oldest = consumed_order_.front();
        consumed_order_.pop_front();
        if (consumed_executors_.erase(oldest) != 0) delete oldest;
    }
}

aclnnStatus Runtime::destroy_executor(aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("aclDestroyAclOpExecutor: executor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.erase(executor) == 0 && consumed_executors_.erase(executor) == 0) {
        set_last_error("aclDestroyAclOpExecutor: executor {} is not live (never created, or destroyed)",
                       static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    auto queued = std::find(consumed_order_.begin(), consumed_order_.end(), executor);
    if (queued != consumed_order_.end()) consumed_order_.erase(queued);
    delete executor;
    return ACLNN_SUCCESS;
}

aclnnStatus Runtime::set_repeatable(aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("aclSetAclOpExecutorRepeatable: executor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.count(executor) == 0) {
        set_last_error("aclSetAclOpExecutorRepeatable: executor {} is not live (consumed or destroyed)",
                       static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    executor->repeatable = true;
    return ACLNN_SUCCESS;
}

aclError acl_error_from(nnplug_status status) {
    switch (status) {
    case NNPLUG_OK: return ACL_SUCCESS;
    case NNPLUG_ERR_INVALID_ARGUMENT: return ACL_ERROR_INVALID_PARAM;
    case NNPLUG_ERR_UNSUPPORTED: return ACL_ERROR_FAILURE;
    case NNPLUG_ERR_OUT_OF_MEMORY: return ACL_ERROR_RT_MEMORY_ALLOCATION;
    case NNPLUG_ERR_BAD_HANDLE: return ACL_ERROR_INVALID_RESOURCE_HANDLE;
    case NNPLUG_ERR_KERNEL: return ACL_ERROR_RT_FAILURE;
    default: return ACL_ERROR_INTERNAL_ERROR;
    }
}

}  // namespace nnplug
