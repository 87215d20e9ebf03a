// The acl* runtime calls of acl/acl_base.h and acl/acl_rt.h, between aclInit and
// aclFinalize (runtime_lifecycle.cpp): devices, contexts, streams, memory, executors.
#include <acl/acl.h>

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

// One implicit context per device: the handle is the device number plus one.
aclrtContext context_of(int32_t device) {
    return reinterpret_cast<aclrtContext>(static_cast<intptr_t>(device) + 1);
}
// The device of a context handle, or -1 for anything aclrtCreateContext never returned.
// Contexts own nothing, so a destroy racing a use cannot free what the use reads.
int32_t device_of(aclrtContext context, uint32_t device_count) {
    const intptr_t handle = reinterpret_cast<intptr_t>(context);
    if (handle < 1 || handle > static_cast<intptr_t>(device_count)) return -1;
    return static_cast<int32_t>(handle - 1);
}

}  // namespace
}  // namespace nnplug

using nnplug::guarded;
using nnplug::RuntimeLease;
using nnplug::set_last_error;

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) {
    RuntimeLease runtime("aclrtSetDevice");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (const aclError error = runtime->check_device_id("aclrtSetDevice", deviceId)) return error;
    runtime->set_current_device(deviceId);
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
    *context = nnplug::context_of(deviceId);
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
    RuntimeLease runtime("aclrtDestroyContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtDestroyContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (nnplug::device_of(context, runtime->device_count()) < 0) {
        set_last_error("aclrtDestroyContext: {} is not a context from aclrtCreateContext", context);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    RuntimeLease runtime("aclrtSetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    const int32_t device = nnplug::device_of(context, runtime->device_count());
    if (device < 0) {
        set_last_error("aclrtSetCurrentContext: {} is not a context from aclrtCreateContext", context);
        return ACL_ERROR_INVALID_PARAM;
    }
    runtime->set_current_device(device);
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
    RuntimeLease runtime("aclrtGetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtGetCurrentContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *context = nnplug::context_of(runtime->current_device());
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

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
    RuntimeLease runtime("aclDestroyAclOpExecutor");
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    return runtime->destroy_executor(executor);
}

}  // extern "C"
