// A plugin built against the SDK headers of version 2's first layout (tests/compat/sdk_v2/,
// the headers as nnplug shipped them before the class-axis ops, integer dtypes and typed
// attributes were appended): it must still load and pass the kit's cases of the ops it
// serves, aclnnMseLoss and aclnnMseLossBackward. It reads its descriptors with its own,
// smaller sizeof, as an old plugin does. Plain scalar loops; host memory; synchronous streams.
#include <nnplug/dtype_convert.h>
#include <nnplug/plugin.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

thread_local std::string g_error;

nnplug_status fail(nnplug_status status, const char* message) {
    g_error = message;
    return status;
}

char g_context;  // one device, no state: the context is a token

nnplug_status create(const nnplug_option*, size_t, int32_t, void** ctx) {
    *ctx = &g_context;
    return NNPLUG_OK;
}
void destroy(void*) {}
const char* soc_name(void*) {
    return "CPU";
}
uint32_t dtype_mask(void*) {
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16);
}
const char* last_error(void*) {
    return g_error.c_str();
}

nnplug_status device_malloc(void*, size_t bytes, void** ptr) {
    *ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    return *ptr != nullptr ? NNPLUG_OK : fail(NNPLUG_ERR_OUT_OF_MEMORY, "out of memory");
}
nnplug_status device_free(void*, void* ptr) {
    std::free(ptr);
    return NNPLUG_OK;
}
nnplug_status device_memcpy(void*, void* dst, const void* src, size_t bytes, int32_t) {
    std::memmove(dst, src, bytes);
    return NNPLUG_OK;
}
nnplug_status device_memset(void*, void* ptr, int32_t value, size_t bytes) {
    std::memset(ptr, value, bytes);
    return NNPLUG_OK;
}
nnplug_status stream_create(void*, void** stream) {
    *stream = new char;
    return NNPLUG_OK;
}
nnplug_status stream_destroy(void*, void* stream) {
    delete static_cast<char*>(stream);
    return NNPLUG_OK;
}
nnplug_status stream_synchronize(void*, void*) {
    return NNPLUG_OK;
}

// The element of operand t at the multi-index `index` of the iteration space.
int64_t element(const nnplug_op_desc& desc, const nnplug_tensor& t, const int64_t* index) {
    int64_t e = t.offset;
    for (int32_t k = 0; k < desc.ndim; ++k) e += index[k] * t.strides[k];
    return e;
}

// Calls body(index) for every element of the iteration space, in row-major order.
template <typename Body>
void for_each_element(const nnplug_op_desc& desc, Body&& body) {
    int64_t index[NNPLUG_MAX_DIMS] = {};
    for (int64_t n = 0; n < desc.numel; ++n) {
        body(index);
        for (int32_t k = desc.ndim - 1; k >= 0 && ++index[k] == desc.dims[k]; --k) index[k] = 0;
    }
}

float load(const nnplug_op_desc& desc, int slot, const int64_t* index) {
    const nnplug_tensor& t = desc.operands[slot];
    return nnplug::load_as_f32(t.data, t.dtype, element(desc, t, index));
}

// (x - y)^2 per element, or its mean or sum in double.
void mse_loss(const nnplug_op_desc& desc) {
    const nnplug_tensor& out = desc.operands[NNPLUG_MSE_LOSS_OUT];
    const bool reduced = (out.flags & NNPLUG_OPERAND_REDUCED) != 0;
    double sum = 0;
    for_each_element(desc, [&](const int64_t* index) {
        const float d = load(desc, NNPLUG_MSE_LOSS_SELF, index) - load(desc, NNPLUG_MSE_LOSS_TARGET, index);
        const float l = d * d;
        if (reduced)
            sum += l;
        else
            nnplug::store_from_f32(out.data, out.dtype, element(desc, out, index), l);
    });
    if (reduced)
        nnplug::store_from_f32(out.data, out.dtype, out.offset,
                               static_cast<float>(sum * nnplug_attr_f64(&desc, NNPLUG_ATTR_SCALE, 1.0)));
}

// ((x - y) * norm) * g, norm = 2 * scale: the canonical float32 expression.
void mse_loss_backward(const nnplug_op_desc& desc) {
    const nnplug_tensor& out = desc.operands[NNPLUG_MSE_LOSS_BACKWARD_OUT];
    const float norm = 2.0f * static_cast<float>(nnplug_attr_f64(&desc, NNPLUG_ATTR_SCALE, 1.0));
    for_each_element(desc, [&](const int64_t* index) {
        const float d = load(desc, NNPLUG_MSE_LOSS_BACKWARD_SELF, index) -
                        load(desc, NNPLUG_MSE_LOSS_BACKWARD_TARGET, index);
        const float g = load(desc, NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT, index);
        nnplug::store_from_f32(out.data, out.dtype, element(desc, out, index), (d * norm) * g);
    });
}

nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace) {
    *plan = nullptr;
    *workspace = 0;
    return NNPLUG_OK;
}

nnplug_status launch(void*, const void*, const nnplug_op_desc* desc, void*, uint64_t, void*) {
    if (desc->struct_size < sizeof(nnplug_op_desc))
        return fail(NNPLUG_ERR_INVALID_ARGUMENT, "descriptor too small");
    if (desc->op == NNPLUG_OP_MSE_LOSS)
        mse_loss(*desc);
    else
        mse_loss_backward(*desc);
    return NNPLUG_OK;
}

nnplug_op_i op_table(int32_t kind, const char* name) {
    nnplug_op_i op;
    std::memset(&op, 0, sizeof op);
    op.struct_size = sizeof op;
    op.op = kind;
    op.name = name;
    op.prepare = prepare;
    op.launch = launch;
    return op;
}

const nnplug_op_i kForward = op_table(NNPLUG_OP_MSE_LOSS, "aclnnMseLoss");
const nnplug_op_i kBackward = op_table(NNPLUG_OP_MSE_LOSS_BACKWARD, "aclnnMseLossBackward");
const nnplug_op_i* const kOps[] = {&kForward, &kBackward};

const nnplug_device_i kDevice = [] {
    nnplug_device_i device;
    std::memset(&device, 0, sizeof device);
    device.struct_size = sizeof device;
    device.memory_kind = NNPLUG_MEMORY_HOST;
    device.malloc = device_malloc;
    device.free = device_free;
    device.memcpy = device_memcpy;
    device.memset = device_memset;
    device.stream_create = stream_create;
    device.stream_destroy = stream_destroy;
    device.stream_synchronize = stream_synchronize;
    return device;
}();

const nnplug_plugin kPlugin = [] {
    nnplug_plugin plugin;
    std::memset(&plugin, 0, sizeof plugin);
    plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
    plugin.struct_size = sizeof plugin;
    plugin.name = "abi_v2";
    plugin.description = "a plugin built against version 2's first SDK headers";
    plugin.create = create;
    plugin.destroy = destroy;
    plugin.soc_name = soc_name;
    plugin.dtype_mask = dtype_mask;
    plugin.last_error = last_error;
    plugin.device = &kDevice;
    plugin.ops = kOps;
    plugin.op_count = 2;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
