// A working backend for the routing tests, named "constant": its one op,
// aclnnBinaryCrossEntropy, writes 42 to every element of out, so a test can tell which
// backend ran a call. Its supports() refuses reductions other than none; the option
// `fail: true` makes create fail.
#include <string_view>

#include "fake_backend.h"

namespace {

constexpr float kMark = 42.0f;

nnplug_status create(const nnplug_option* options, size_t count, int32_t, void** ctx) {
    for (size_t i = 0; i < count; ++i)
        if (std::string_view(options[i].key) == "fail" && std::string_view(options[i].value) == "true")
            return nnplug::sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, "create fails on purpose (fail: true)");
    *ctx = nullptr;
    return NNPLUG_OK;
}

nnplug_status supports(void*, const nnplug_op_desc* desc, int32_t* operand) {
    if (nnplug::sdk::reduction(*desc) == NNPLUG_REDUCTION_NONE) return NNPLUG_OK;
    *operand = -1;
    return nnplug::sdk::fail(NNPLUG_ERR_UNSUPPORTED, "the constant backend only runs reduction none");
}

nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace_bytes) {
    *plan = nullptr;
    *workspace_bytes = 0;
    return NNPLUG_OK;
}

// Every element of out, in the iteration space's row-major order.
nnplug_status launch(void*, const void*, const nnplug_op_desc* desc, void*, uint64_t, void*) {
    const nnplug_tensor& out = desc->operands[NNPLUG_BINARY_CROSS_ENTROPY_OUT];
    int64_t index[NNPLUG_MAX_DIMS] = {};
    for (int64_t n = 0; n < desc->numel; ++n) {
        int64_t element = out.offset;
        for (int32_t k = 0; k < desc->ndim; ++k) element += index[k] * out.strides[k];
        static_cast<float*>(out.data)[element] = kMark;
        for (int32_t k = desc->ndim; k-- > 0;) {
            if (++index[k] < desc->dims[k]) break;
            index[k] = 0;
        }
    }
    return NNPLUG_OK;
}

const nnplug_op_i kForward = [] {
    auto op = nnplug::sdk::table<nnplug_op_i>();
    op.op = NNPLUG_OP_BINARY_CROSS_ENTROPY;
    op.name = "aclnnBinaryCrossEntropy";
    op.supports = supports;
    op.prepare = prepare;
    op.launch = launch;
    return op;
}();
const nnplug_op_i* const kOps[] = {&kForward};
const nnplug_option_info kOptions[] = {{"fail", "false", "create fails when true"}};

const nnplug_plugin kPlugin = [] {
    auto plugin = fake::table("constant");
    plugin.description = "writes 42 to every element of out (routing tests)";
    plugin.create = create;
    plugin.options = kOptions;
    plugin.option_count = 1;
    plugin.ops = kOps;
    plugin.op_count = 1;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
