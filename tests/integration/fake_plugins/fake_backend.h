// A minimal backend that loads and initializes: device memory is host memory, streams are
// tokens, and its one op refuses every call. The fake plugins start from its table.
#pragma once

#include <nnplug/plugin_support.h>

#include <cstdlib>
#include <cstring>

namespace fake {

inline nnplug_status create(const nnplug_option*, size_t, int32_t, void** ctx) {
    *ctx = nullptr;
    return NNPLUG_OK;
}
inline void destroy(void*) {}
inline const char* soc_name(void*) {
    return "CPU";
}
inline uint32_t dtype_mask(void*) {
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32);
}

inline nnplug_status host_malloc(void*, size_t bytes, void** ptr) {
    *ptr = std::malloc(bytes);
    return *ptr != nullptr ? NNPLUG_OK : NNPLUG_ERR_OUT_OF_MEMORY;
}
inline nnplug_status host_free(void*, void* ptr) {
    std::free(ptr);
    return NNPLUG_OK;
}
inline nnplug_status host_memcpy(void*, void* dst, const void* src, size_t bytes, int32_t) {
    std::memmove(dst, src, bytes);
    return NNPLUG_OK;
}
inline nnplug_status host_memset(void*, void* ptr, int32_t value, size_t bytes) {
    std::memset(ptr, value, bytes);
    return NNPLUG_OK;
}
inline nnplug_status stream_create(void*, void** stream) {
    static char token;
    *stream = &token;
    return NNPLUG_OK;
}
inline nnplug_status stream_done(void*, void*) {
    return NNPLUG_OK;
}

inline nnplug_status unsupported(void*, const nnplug_op_desc*, void**, uint64_t*) {
    return nnplug::sdk::fail(NNPLUG_ERR_UNSUPPORTED, "not implemented");
}
inline nnplug_status no_launch(void*, const void*, const nnplug_op_desc*, void*, uint64_t, void*) {
    return NNPLUG_ERR_UNSUPPORTED;
}

inline const nnplug_device_i kDevice = [] {
    auto device = nnplug::sdk::table<nnplug_device_i>();
    device.memory_kind = NNPLUG_MEMORY_HOST;
    device.malloc = host_malloc;
    device.free = host_free;
    device.memcpy = host_memcpy;
    device.memset = host_memset;
    device.stream_create = stream_create;
    device.stream_destroy = stream_done;
    device.stream_synchronize = stream_done;
    return device;
}();

inline const nnplug_op_i kBackward = [] {
    auto op = nnplug::sdk::table<nnplug_op_i>();
    op.op = NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD;
    op.name = "aclnnBinaryCrossEntropyBackward";
    op.prepare = unsupported;
    op.launch = no_launch;
    return op;
}();

inline const nnplug_op_i* const kOps[] = {&kBackward};

inline nnplug_plugin table(const char* name) {
    auto plugin = nnplug::sdk::table<nnplug_plugin>();
    plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
    plugin.name = name;
    plugin.description = "a fake backend for the discovery tests";
    plugin.create = create;
    plugin.destroy = destroy;
    plugin.soc_name = soc_name;
    plugin.dtype_mask = dtype_mask;
    plugin.last_error = nnplug::sdk::last_error;
    plugin.device = &kDevice;
    plugin.ops = kOps;
    plugin.op_count = 1;
    return plugin;
}

}  // namespace fake
