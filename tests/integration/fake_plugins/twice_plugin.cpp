// A plugin that lists one op twice: refused at load, whichever entry would win.
#include <nnplug/plugin_support.h>

namespace {

nnplug_status create(const nnplug_option*, size_t, int32_t, void** ctx) {
    *ctx = nullptr;
    return NNPLUG_OK;
}
void destroy(void*) {}
const char* soc_name(void*) { return "CPU"; }
uint32_t dtype_mask(void*) { return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32); }
nnplug_status unsupported(void*, const nnplug_op_desc*, void**, uint64_t*) {
    return nnplug::sdk::fail(NNPLUG_ERR_UNSUPPORTED, "not implemented");
}
nnplug_status no_launch(void*, const void*, const nnplug_op_desc*, void*, uint64_t, void*) {
    return NNPLUG_ERR_UNSUPPORTED;
}
nnplug_status no_malloc(void*, size_t, void**) { return NNPLUG_ERR_OUT_OF_MEMORY; }
nnplug_status no_pointer(void*, void*) { return NNPLUG_ERR_BAD_HANDLE; }
nnplug_status no_copy(void*, void*, const void*, size_t, int32_t) { return NNPLUG_ERR_UNSUPPORTED; }
nnplug_status no_memset(void*, void*, int32_t, size_t) { return NNPLUG_ERR_UNSUPPORTED; }
nnplug_status no_stream(void*, void**) { return NNPLUG_ERR_UNSUPPORTED; }

nnplug_op_i backward(const char* name) {
    auto op = nnplug::sdk::table<nnplug_op_i>();
    op.op = NNPLUG_OP_BCE_BACKWARD;
    op.name = name;
    op.prepare = unsupported;
    op.launch = no_launch;
    return op;
}

const nnplug_op_i kFirst = backward("aclnnBinaryCrossEntropyBackward");
const nnplug_op_i kSecond = backward("aclnnBinaryCrossEntropyBackward (again)");
const nnplug_op_i* const kOps[] = {&kFirst, &kSecond};

const nnplug_device_i kDevice = [] {
    auto device = nnplug::sdk::table<nnplug_device_i>();
    device.malloc = no_malloc;
    device.free = no_pointer;
    device.memcpy = no_copy;
    device.memset = no_memset;
    device.stream_create = no_stream;
    device.stream_destroy = no_pointer;
    device.stream_synchronize = no_pointer;
    return device;
}();

const nnplug_plugin kPlugin = [] {
    auto plugin = nnplug::sdk::table<nnplug_plugin>();
    plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
    plugin.name = "twice";
    plugin.description = "lists aclnnBinaryCrossEntropyBackward twice";
    plugin.create = create;
    plugin.destroy = destroy;
    plugin.soc_name = soc_name;
    plugin.dtype_mask = dtype_mask;
    plugin.last_error = nnplug::sdk::last_error;
    plugin.device = &kDevice;
    plugin.ops = kOps;
    plugin.op_count = 2;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) { return &kPlugin; }
