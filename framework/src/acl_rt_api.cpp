// The acl* runtime calls of acl/acl_base.h and acl/acl_rt.h, between aclInit and
// aclFinalize (runtime_lifecycle.cpp): devices, contexts, streams, memory, executors.
#include <acl/acl.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "executor_addresses.h"
#include "runtime.h"
#include "tensor.h"

namespace nnplug {
namespace {

// Copy kinds travel as their integer bits (enum_bits), never as the enum: an out-of-range
// value must be checked, not loaded.
bool valid_memcpy_kind(int32_t kind) {
    return kind >= ACL_MEMCPY_HOST_TO_HOST && kind <= ACL_MEMCPY_DEVICE_TO_DEVICE;
}

bool reads_device(int32_t kind) {
    return kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
}
bool writes_device(int32_t kind) {
    return kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
}

aclError check_copy(const Runtime& runtime, const char* api, void* dst, size_t dest_max, const void* src,
                    size_t count, int32_t kind) {
    if (dst == nullptr || src == nullptr) {
        set_last_error("{}: dst or src is null", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (dest_max < count) {
        set_last_error("{}: count {} exceeds destMax {}; nothing copied", api, count, dest_max);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!valid_memcpy_kind(kind)) {
        set_last_error("{}: kind {} is not an aclrtMemcpyKind", api, kind);
        return ACL_ERROR_INVALID_PARAM;
    }
    if ((writes_device(kind) && !runtime.check_on_current_device(api, "dst", dst)) ||
        (reads_device(kind) && !runtime.check_on_current_device(api, "src", src)))
        return ACL_ERROR_INVALID_PARAM;
    return ACL_SUCCESS;
}

// Each device has a default context, current wherever the device is, which cannot be
// destroyed. Its handle is a base far from any small integer or pointer a program might
// pass by mistake, plus the device number.
constexpr uintptr_t kDefaultContextBase = uintptr_t{1} << 39;
aclrtContext default_context(int32_t device) {
    return reinterpret_cast<aclrtContext>(kDefaultContextBase + static_cast<uintptr_t>(device));
}
int32_t default_context_device(aclrtContext context, uint32_t device_count) {
    const uintptr_t handle = reinterpret_cast<uintptr_t>(context);
    if (handle < kDefaultContextBase || handle - kDefaultContextBase >= device_count) return -1;
    return static_cast<int32_t>(handle - kDefaultContextBase);
}

// The contexts aclrtCreateContext made and aclrtDestroyContext has not yet destroyed, each
// under a handle never given out before (above every default context's), so a handle
// destroyed once, or never made, is refused. A context owns nothing (the device's
// resources live until aclFinalize): a destroy racing a use frees nothing the use reads.
class CreatedContexts {
public:
    aclrtContext create(int32_t device) {
        std::lock_guard lock(mutex_);
        const uintptr_t handle = next_++;
        live_[handle] = device;
        return reinterpret_cast<aclrtContext>(handle);
    }
    bool destroy(aclrtContext context) {
        std::lock_guard lock(mutex_);
        return live_.erase(reinterpret_cast<uintptr_t>(context)) == 1;
    }
    // The device of a live created context, or -1.
    int32_t device(aclrtContext context) const {
        std::lock_guard lock(mutex_);
        const auto found = live_.find(reinterpret_cast<uintptr_t>(context));
        return found == live_.end() ? -1 : found->second;
    }

private:
    mutable std::mutex mutex_;
    std::unordered_map<uintptr_t, int32_t> live_;
    uintptr_t next_ = uintptr_t{1} << 40;
};

CreatedContexts& created_contexts() {
    static CreatedContexts contexts;
    return contexts;
}

// The context this thread last made current with aclrtSetCurrentContext.
thread_local aclrtContext t_current_context = nullptr;

// The device of a created or default context, or -1 for any other handle.
int32_t device_of(aclrtContext context, uint32_t device_count) {
    const int32_t device = created_contexts().device(context);
    if (device >= 0) return device < static_cast<int32_t>(device_count) ? device : -1;
    return default_context_device(context, device_count);
}

}  // namespace
}  // namespace nnplug

using nnplug::guarded;
using nnplug::OperandGroup;
using nnplug::RuntimeLease;
using nnplug::set_last_error;
using nnplug::set_tensor_address;

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) {
    RuntimeLease runtime("aclrtSetDevice");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (const aclError error = runtime->check_device_id("aclrtSetDevice", deviceId)) return error;
    runtime->set_current_device(deviceId);
    nnplug::t_current_context = nullptr;  // the device's default context is current now
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    return guarded("aclrtResetDevice", [&] {
        RuntimeLease runtime("aclrtResetDevice");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (const aclError error = runtime->check_device_id("aclrtResetDevice", deviceId)) return error;
        // Resetting waits for the device's work, as CANN does; resources stay until aclFinalize.
        return runtime->synchronize_device("aclrtResetDevice", deviceId);
    });
}

aclError aclrtGetDevice(int32_t* deviceId) {
    RuntimeLease runtime("aclrtGetDevice");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (deviceId == nullptr) {
        set_last_error("aclrtGetDevice: deviceId is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *deviceId = runtime->current_device();
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
    RuntimeLease runtime("aclrtGetDeviceCount");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (count == nullptr) {
        set_last_error("aclrtGetDeviceCount: count is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *count = runtime->device_count();
    return ACL_SUCCESS;
}

const char* aclrtGetSocName(void) {
    RuntimeLease runtime("aclrtGetSocName");
    if (!runtime) return nullptr;
    return nnplug::soc_name_of(runtime->plugin(), runtime->context());
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    RuntimeLease runtime("aclrtCreateContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtCreateContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (const aclError error = runtime->check_device_id("aclrtCreateContext", deviceId)) return error;
    *context = nnplug::created_contexts().create(deviceId);
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
    RuntimeLease runtime("aclrtDestroyContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtDestroyContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (nnplug::created_contexts().destroy(context)) return ACL_SUCCESS;
    if (const int32_t device = nnplug::default_context_device(context, runtime->device_count());
        device >= 0) {
        set_last_error("aclrtDestroyContext: {} is device {}'s default context, which is never destroyed",
                       context, device);
        return ACL_ERROR_INVALID_PARAM;
    }
    set_last_error(
        "aclrtDestroyContext: {} is not a context from aclrtCreateContext (never made, or destroyed "
        "already)",
        context);
    return ACL_ERROR_INVALID_PARAM;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    RuntimeLease runtime("aclrtSetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    const int32_t device = nnplug::device_of(context, runtime->device_count());
    if (device < 0) {
        set_last_error(
            "aclrtSetCurrentContext: {} is not a context from aclrtCreateContext (never made, or "
            "destroyed already) nor a device's default context",
            context);
        return ACL_ERROR_INVALID_PARAM;
    }
    runtime->set_current_device(device);
    nnplug::t_current_context = context;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
    RuntimeLease runtime("aclrtGetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtGetCurrentContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    // The context last made current on this thread, while it lives; after aclrtSetDevice,
    // the device's default context.
    const int32_t device = runtime->current_device();
    const aclrtContext last = nnplug::t_current_context;
    *context = last != nullptr && nnplug::device_of(last, runtime->device_count()) == device
                   ? last
                   : nnplug::default_context(device);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    return guarded("aclrtCreateStream", [&] {
        RuntimeLease runtime("aclrtCreateStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (stream == nullptr) {
            set_last_error("aclrtCreateStream: stream is null");
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->create_stream(stream);
    });
}

aclError aclrtDestroyStream(aclrtStream stream) {
    return guarded("aclrtDestroyStream", [&] {
        RuntimeLease runtime("aclrtDestroyStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        return runtime->destroy_stream(stream);
    });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    return guarded("aclrtSynchronizeStream", [&] {
        RuntimeLease runtime("aclrtSynchronizeStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        void* resolved = runtime->resolve_stream("aclrtSynchronizeStream", stream);
        if (resolved == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        const nnplug_status status = runtime->device_table().stream_synchronize(runtime->context(), resolved);
        if (status == NNPLUG_ERR_BAD_HANDLE && stream != nullptr) {  // destroyed by another thread meanwhile
            set_last_error("aclrtSynchronizeStream: stream {} was destroyed during the call", stream);
            return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        }
        if (status != NNPLUG_OK) return runtime->fail_from_backend("aclrtSynchronizeStream", status);
        return ACL_SUCCESS;
    });
}

aclError aclrtSynchronizeDevice(void) {
    return guarded("aclrtSynchronizeDevice", [&] {
        RuntimeLease runtime("aclrtSynchronizeDevice");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        return runtime->synchronize_device("aclrtSynchronizeDevice", runtime->current_device());
    });
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
    return guarded("aclrtMalloc", [&] {
        RuntimeLease runtime("aclrtMalloc");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr || size == 0) {
            set_last_error("aclrtMalloc: devPtr is null or size is 0");
            return ACL_ERROR_INVALID_PARAM;
        }
        const int32_t policy_value = nnplug::enum_bits(policy);
        if (policy_value < ACL_MEM_MALLOC_HUGE_FIRST || policy_value > ACL_MEM_MALLOC_NORMAL_ONLY) {
            set_last_error("aclrtMalloc: policy {} is not an aclrtMemMallocPolicy", policy_value);
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->malloc_device(devPtr, size);
    });
}

aclError aclrtFree(void* devPtr) {
    return guarded("aclrtFree", [&] {
        RuntimeLease runtime("aclrtFree");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr) {
            set_last_error("aclrtFree: devPtr is null");
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->free_device(devPtr);
    });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
    return guarded("aclrtMallocHost", [&] {
        RuntimeLease runtime("aclrtMallocHost");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (hostPtr == nullptr || size == 0) {
            set_last_error("aclrtMallocHost: hostPtr is null or size is 0");
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->malloc_host(hostPtr, size);
    });
}

aclError aclrtFreeHost(void* hostPtr) {
    return guarded("aclrtFreeHost", [&] {
        RuntimeLease runtime("aclrtFreeHost");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        return runtime->free_host(hostPtr);
    });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    return guarded("aclrtMemcpy", [&] {
        RuntimeLease runtime("aclrtMemcpy");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        const int32_t kind_bits = nnplug::enum_bits(kind);
        if (const aclError error =
                nnplug::check_copy(*runtime, "aclrtMemcpy", dst, destMax, src, count, kind_bits))
            return error;
        if (count == 0) return ACL_SUCCESS;
        const nnplug_status status =
            runtime->device_table().memcpy(runtime->context(), dst, src, count, kind_bits);
        if (status != NNPLUG_OK) return runtime->fail_from_backend("aclrtMemcpy", status);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    return guarded("aclrtMemcpyAsync", [&] {
        RuntimeLease runtime("aclrtMemcpyAsync");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        const int32_t kind_bits = nnplug::enum_bits(kind);
        if (const aclError error =
                nnplug::check_copy(*runtime, "aclrtMemcpyAsync", dst, destMax, src, count, kind_bits))
            return error;
        void* resolved = runtime->resolve_stream("aclrtMemcpyAsync", stream);
        if (resolved == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        if (count == 0) return ACL_SUCCESS;
        const auto& device = runtime->device_table();
        nnplug_status status;
        if (device.memcpy_async != nullptr) {
            status = device.memcpy_async(runtime->context(), dst, src, count, kind_bits, resolved);
        } else {  // a backend without async copies: keep stream order by waiting first
            status = device.stream_synchronize(runtime->context(), resolved);
            if (status == NNPLUG_OK) status = device.memcpy(runtime->context(), dst, src, count, kind_bits);
        }
        if (status != NNPLUG_OK) return runtime->fail_from_backend("aclrtMemcpyAsync", status);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    return guarded("aclrtMemset", [&] {
        RuntimeLease runtime("aclrtMemset");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr || maxCount < count) {
            set_last_error("aclrtMemset: devPtr is null or count {} exceeds maxCount {}", count, maxCount);
            return ACL_ERROR_INVALID_PARAM;
        }
        if (!runtime->check_on_current_device("aclrtMemset", "devPtr", devPtr))
            return ACL_ERROR_INVALID_PARAM;
        if (count == 0) return ACL_SUCCESS;
        const nnplug_status status = runtime->device_table().memset(runtime->context(), devPtr, value, count);
        if (status != NNPLUG_OK) return runtime->fail_from_backend("aclrtMemset", status);
        return ACL_SUCCESS;
    });
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
    RuntimeLease runtime("aclSetAclOpExecutorRepeatable");
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    return runtime->set_repeatable(executor);
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                  void* addr) {
    return set_tensor_address("aclSetInputTensorAddr", OperandGroup::kInputs, executor, index, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                   void* addr) {
    return set_tensor_address("aclSetOutputTensorAddr", OperandGroup::kOutputs, executor, index, tensor,
                              addr);
}

aclnnStatus aclSetTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor, void* addr) {
    return set_tensor_address("aclSetTensorAddr", OperandGroup::kAll, executor, index, tensor, addr);
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
    RuntimeLease runtime("aclDestroyAclOpExecutor");
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    return runtime->destroy_executor(executor);
}

}  // extern "C"
