// scalar_ref: a reference backend in plain scalar loops, the example of docs/writing-a-plugin.md.
//
// Device memory is host memory, streams are synchronous (a launch has finished when it
// returns), and every elementwise op walks the descriptor's iteration space one element at a
// time, reading and writing each operand through its strides, evaluating the canonical float32
// expressions of <nnplug/ops/*_math.h>. The ops with a class axis walk it one row at a time
// (scalar_ref_class_ops.cpp). Slow, short, and right: a backend to compare with.
//
// The SCALAR_REF_BUG_* definitions build deliberately wrong variants of this plugin (in this
// file and scalar_ref_class_ops.cpp), which the conformance kit's tests must see fail
// (tests/conformance_kit/). A real build defines none of them.
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/bce_math.h>
#include <nnplug/ops/bce_with_logits_math.h>
#include <nnplug/ops/mse_loss_math.h>
#include <nnplug/plugin_support.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <string>

#include "scalar_ref_class_ops.h"

namespace sdk = nnplug::sdk;

#ifndef SCALAR_REF_NAME
#define SCALAR_REF_NAME "scalar_ref"
#endif

namespace {

// ---- The device: host memory and synchronous streams ----------------------------------

struct Context {
    std::mutex mutex;             // the runtime may call from several threads at once
    std::set<void*> allocations;  // to refuse freeing what this device did not allocate
#ifdef SCALAR_REF_BUG_RACE
    nnplug_op_desc launching;  // BUG: one descriptor copy shared by every launch
#endif
};

Context& of(void* ctx) {
    return *static_cast<Context*>(ctx);
}

nnplug_status device_malloc(void* ctx, size_t bytes, void** ptr) {
    return sdk::fenced("malloc", [&] {
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);  // CANN aligns blocks to 64 bytes at least
        if (p == nullptr)
            return sdk::fail(NNPLUG_ERR_OUT_OF_MEMORY, "no memory for " + std::to_string(bytes) + " bytes");
        std::lock_guard lock(of(ctx).mutex);
        of(ctx).allocations.insert(p);
        *ptr = p;
        return NNPLUG_OK;
    });
}

nnplug_status device_free(void* ctx, void* ptr) {
    std::lock_guard lock(of(ctx).mutex);
    if (of(ctx).allocations.erase(ptr) == 0)
        return sdk::fail(NNPLUG_ERR_BAD_HANDLE, "not allocated by scalar_ref");
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
    return sdk::fenced("stream_create", [&] {
        *stream = new char;  // a token: work is done by the time a launch returns
        return NNPLUG_OK;
    });
}

nnplug_status stream_destroy(void*, void* stream) {
    delete static_cast<char*>(stream);
    return NNPLUG_OK;
}

nnplug_status stream_synchronize(void*, void*) {
    return NNPLUG_OK;
}

// ---- Walking a descriptor ---------------------------------------------------------------

// A position in the iteration space: index[k] runs over 0..dims[k]-1.
struct Position {
    const nnplug_op_desc& desc;
    int64_t index[NNPLUG_MAX_DIMS] = {};

    // Operand slot's element at this position, counted in elements from its data.
    int64_t element(int slot) const {
        const nnplug_tensor& t = desc.operands[slot];
#ifdef SCALAR_REF_BUG_OFFSET_32BIT  // BUG: element offsets in 32-bit arithmetic
        int32_t e = static_cast<int32_t>(t.offset);
        for (int32_t k = 0; k < desc.ndim; ++k) e += static_cast<int32_t>(index[k] * t.strides[k]);
#else
        int64_t e = t.offset;
        for (int32_t k = 0; k < desc.ndim; ++k) e += index[k] * t.strides[k];
#endif
        return e;
    }
    // The operand's value widened to float32; an absent optional operand is `absent`.
    float load(int slot, float absent = 1.0f) const {
        const nnplug_tensor& t = desc.operands[slot];
        return sdk::present(t) ? nnplug::load_as_f32(t.data, t.dtype, element(slot)) : absent;
    }
};

// Rounds a float32 into dtype and widens it back, as a cast to dtype would.
float rounded_to(int64_t dtype, float value) {
    if (dtype == NNPLUG_DTYPE_F16) return nnplug::f16_to_f32(nnplug::f32_to_f16(value));
    if (dtype == NNPLUG_DTYPE_BF16) return nnplug::bf16_to_f32(nnplug::f32_to_bf16(value));
    return value;
}

// Writes value, rounded to nearest even, as element `element` of out.
void store(const nnplug_tensor& out, int64_t element, float value) {
#ifdef SCALAR_REF_BUG_F16_TRUNCATE  // BUG: float16 rounded towards zero
    if (out.dtype == NNPLUG_DTYPE_F16 && value == value) {
        uint16_t h = nnplug::f32_to_f16(value);
        if (std::abs(nnplug::f16_to_f32(h)) > std::abs(value)) --h;
        std::memcpy(static_cast<char*>(out.data) + element * 2, &h, 2);
        return;
    }
#endif
    nnplug::store_from_f32(out.data, out.dtype, element, value);
}

// Calls value(position) for every element of the iteration space in row-major order and
// writes the results to the output slot `out_slot`: one per element, or, when that output
// is reduced, their sum (in double) or mean as the one element at its offset.
template <typename Value>
void for_each_element(const nnplug_op_desc& desc, int out_slot, Value&& value) {
    const nnplug_tensor& out = desc.operands[out_slot];
#ifdef SCALAR_REF_BUG_WRITE_OUTSIDE_VIEW  // BUG: clears out's whole storage, not only its view
    std::memset(out.data, 0, static_cast<size_t>(out.storage_bytes));
#endif
    double sum = 0.0;
    Position at{desc};
    for (int64_t n = 0; n < desc.numel; ++n) {
        const float v = value(at);
        if (sdk::reduced(out))
            sum += v;
        else
            store(out, at.element(out_slot), v);
        for (int32_t k = desc.ndim - 1; k >= 0 && ++at.index[k] == desc.dims[k]; --k) at.index[k] = 0;
    }
    if (!sdk::reduced(out)) return;
#ifndef SCALAR_REF_BUG_MEAN_NOT_SCALED  // BUG when defined: the mean is left a sum
    if (sdk::reduction(desc) == NNPLUG_REDUCTION_MEAN) sum /= static_cast<double>(sdk::reduce_count(desc));
#endif
    store(out, out.offset, static_cast<float>(sum));
}

#ifdef SCALAR_REF_BUG_EPSILON  // BUG: the backward's denominator clamped at 1e-6, not 1e-12
float bce_backward(float grad, float weight, float self, float target, float scale) {
    return grad * weight * (self - target) / nnplug::clamp_below(self * (1.0f - self), 1e-6f) * scale;
}
#else
using nnplug::bce_backward;
#endif

// ---- The ops -----------------------------------------------------------------------

void run_bce(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropy
    for_each_element(d, NNPLUG_BCE_OUT, [](const Position& at) {
        return nnplug::bce_forward(at.load(NNPLUG_BCE_WEIGHT), at.load(NNPLUG_BCE_SELF),
                                   at.load(NNPLUG_BCE_TARGET));
    });
}

void run_bce_backward(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropyBackward
    const float scale = sdk::scale(d);
    for_each_element(d, NNPLUG_BCE_BACKWARD_OUT, [&](const Position& at) {
        return bce_backward(at.load(NNPLUG_BCE_BACKWARD_GRAD_OUTPUT), at.load(NNPLUG_BCE_BACKWARD_WEIGHT),
                            at.load(NNPLUG_BCE_BACKWARD_SELF), at.load(NNPLUG_BCE_BACKWARD_TARGET), scale);
    });
}

void run_with_logits(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropyWithLogits
    // weight and posWeight are cast to the promoted dtype of self and target first.
    const int64_t promoted = nnplug_attr_i64(&d, NNPLUG_ATTR_PROMOTED_DTYPE, NNPLUG_DTYPE_F32);
    const bool has_pos_weight = nnplug_operand_present(&d, NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT);
    for_each_element(d, NNPLUG_BCE_WITH_LOGITS_OUT, [&](const Position& at) {
        const float x = at.load(NNPLUG_BCE_WITH_LOGITS_SELF), y = at.load(NNPLUG_BCE_WITH_LOGITS_TARGET);
#ifdef SCALAR_REF_BUG_WEIGHT_NOT_ROUNDED  // BUG: weight and posWeight used as stored, not cast first
        static_cast<void>(promoted);
        const float w = at.load(NNPLUG_BCE_WITH_LOGITS_WEIGHT);
        if (!has_pos_weight) return nnplug::bce_with_logits_forward(x, y, w);
        const float p = at.load(NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT);
#else
        const float w = rounded_to(promoted, at.load(NNPLUG_BCE_WITH_LOGITS_WEIGHT));
#ifdef SCALAR_REF_BUG_ABSENT_POS_WEIGHT  // BUG: no posWeight computed as posWeight 1
        if (!has_pos_weight) return nnplug::bce_with_logits_forward_pos(x, y, w, 1.0f);
#endif
        if (!has_pos_weight) return nnplug::bce_with_logits_forward(x, y, w);
        const float p = rounded_to(promoted, at.load(NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT));
#endif
        return nnplug::bce_with_logits_forward_pos(x, y, w, p);
    });
}

void run_with_logits_backward(const nnplug_op_desc& d) {  // ...WithLogitsBackward and ...TargetBackward
    const float scale = sdk::scale(d);
    const bool has_pos_weight = nnplug_operand_present(&d, NNPLUG_BCE_WITH_LOGITS_BACKWARD_POS_WEIGHT);
    const bool wrt_target = d.op == NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD;
    for_each_element(d, NNPLUG_BCE_WITH_LOGITS_BACKWARD_OUT, [&](const Position& at) {
        const float g = at.load(NNPLUG_BCE_WITH_LOGITS_BACKWARD_GRAD_OUTPUT);
        const float x = at.load(NNPLUG_BCE_WITH_LOGITS_BACKWARD_SELF);
        const float w = at.load(NNPLUG_BCE_WITH_LOGITS_BACKWARD_WEIGHT);
        const float p = at.load(NNPLUG_BCE_WITH_LOGITS_BACKWARD_POS_WEIGHT);
        if (wrt_target)
            return has_pos_weight ? nnplug::bce_with_logits_target_backward_pos(g, x, w, p, scale)
                                  : nnplug::bce_with_logits_target_backward(g, x, w, scale);
        const float y = at.load(NNPLUG_BCE_WITH_LOGITS_BACKWARD_TARGET);
#ifdef SCALAR_REF_BUG_ABSENT_POS_WEIGHT  // BUG: no posWeight computed as posWeight 1
        return nnplug::bce_with_logits_backward_pos(g, x, y, w, has_pos_weight ? p : 1.0f, scale);
#endif
        return has_pos_weight ? nnplug::bce_with_logits_backward_pos(g, x, y, w, p, scale)
                              : nnplug::bce_with_logits_backward(g, x, y, w, scale);
    });
}

void run_mse_loss(const nnplug_op_desc& d) {  // aclnnMseLoss: self and target broadcast to each other
    for_each_element(d, NNPLUG_MSE_LOSS_OUT, [](const Position& at) {
        return nnplug::mse_loss(at.load(NNPLUG_MSE_LOSS_SELF), at.load(NNPLUG_MSE_LOSS_TARGET));
    });
}

void run_mse_loss_backward(const nnplug_op_desc& d) {  // aclnnMseLossBackward
    const float norm = nnplug::mse_loss_norm(nnplug_attr_f64(&d, NNPLUG_ATTR_SCALE, 1.0));
    for_each_element(d, NNPLUG_MSE_LOSS_BACKWARD_OUT, [&](const Position& at) {
        return nnplug::mse_loss_backward(at.load(NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT),
                                         at.load(NNPLUG_MSE_LOSS_BACKWARD_SELF),
                                         at.load(NNPLUG_MSE_LOSS_BACKWARD_TARGET), norm);
    });
}

// Nothing to plan and no workspace.
nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace_bytes) {
    *plan = nullptr;
    *workspace_bytes = 0;
    return NNPLUG_OK;
}

nnplug_status launch(void* ctx, const void*, const nnplug_op_desc* desc, void*, uint64_t, void*) {
    return sdk::fenced("launch", [&] {
#ifdef SCALAR_REF_BUG_RACE  // BUG: launches from several threads overwrite each other's descriptor
        of(ctx).launching = *desc;
        desc = &of(ctx).launching;
#else
        (void)ctx;
#endif
        switch (desc->op) {
            case NNPLUG_OP_BCE_FORWARD:
                run_bce(*desc);
                break;
            case NNPLUG_OP_BCE_BACKWARD:
                run_bce_backward(*desc);
                break;
            case NNPLUG_OP_BCE_WITH_LOGITS:
                run_with_logits(*desc);
                break;
            case NNPLUG_OP_BCE_WITH_LOGITS_BACKWARD:
            case NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD:
                run_with_logits_backward(*desc);
                break;
            case NNPLUG_OP_MSE_LOSS:
                run_mse_loss(*desc);
                break;
            case NNPLUG_OP_MSE_LOSS_BACKWARD:
                run_mse_loss_backward(*desc);
                break;
            case NNPLUG_OP_NLL_LOSS:
            case NNPLUG_OP_NLL_LOSS_2D:
            case NNPLUG_OP_NLL_LOSS_BACKWARD:
            case NNPLUG_OP_NLL_LOSS_2D_BACKWARD:
            case NNPLUG_OP_CROSS_ENTROPY_LOSS:
            case NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD:
                return scalar_ref::run_class_op(*desc);  // refuses a bad target, writing nothing
            default:
                return sdk::fail(NNPLUG_ERR_UNSUPPORTED, "scalar_ref has no op " + std::to_string(desc->op));
        }
        return NNPLUG_OK;
    });
}

// ---- The tables ---------------------------------------------------------------------------

nnplug_status create(const nnplug_option* options, size_t option_count, int32_t, void** ctx) {
    return sdk::fenced("create", [&] {
        if (option_count > 0)  // scalar_ref declares no options, so the runtime passes none
            return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT,
                             std::string("unknown option '") + options[0].key + "'");
        *ctx = new Context;
        return NNPLUG_OK;
    });
}

void destroy(void* ctx) {
    for (void* p : of(ctx).allocations) std::free(p);
    delete static_cast<Context*>(ctx);
}

const char* soc_name(void*) {
    return "CPU";
}

uint32_t dtype_mask(void*) {  // the integer types are the class-axis ops' targets
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);
}

const nnplug_device_i kDevice = [] {
    auto device = sdk::table<nnplug_device_i>();
    device.memory_kind = NNPLUG_MEMORY_HOST;
    device.malloc = device_malloc;
    device.free = device_free;
    device.memcpy = device_memcpy;  // memcpy_async stays null: the runtime synchronizes, then copies
    device.memset = device_memset;
    device.stream_create = stream_create;
    device.stream_destroy = stream_destroy;
    device.stream_synchronize = stream_synchronize;
    return device;
}();

nnplug_op_i op_table(int32_t kind) {
    auto op = sdk::table<nnplug_op_i>();
    op.op = kind;
    op.name = nnplug_op_api_name(kind);
    op.prepare = prepare;
    op.launch = launch;
    return op;
}

const nnplug_op_i kOps[] = {
    op_table(NNPLUG_OP_BCE_FORWARD),
    op_table(NNPLUG_OP_BCE_BACKWARD),
    op_table(NNPLUG_OP_BCE_WITH_LOGITS),
    op_table(NNPLUG_OP_BCE_WITH_LOGITS_BACKWARD),
    op_table(NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD),
    op_table(NNPLUG_OP_MSE_LOSS),
    op_table(NNPLUG_OP_MSE_LOSS_BACKWARD),
    op_table(NNPLUG_OP_NLL_LOSS),
    op_table(NNPLUG_OP_NLL_LOSS_2D),
    op_table(NNPLUG_OP_NLL_LOSS_BACKWARD),
    op_table(NNPLUG_OP_NLL_LOSS_2D_BACKWARD),
    op_table(NNPLUG_OP_CROSS_ENTROPY_LOSS),
    op_table(NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD),
};
const nnplug_op_i* const kOpPointers[] = {&kOps[0],  &kOps[1],  &kOps[2], &kOps[3], &kOps[4],
                                          &kOps[5],  &kOps[6],  &kOps[7], &kOps[8], &kOps[9],
                                          &kOps[10], &kOps[11], &kOps[12]};
static_assert(std::size(kOpPointers) == std::size(kOps), "a pointer for every op of kOps");

const nnplug_plugin kPlugin = [] {
    auto plugin = sdk::table<nnplug_plugin>();
    plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
    plugin.name = SCALAR_REF_NAME;
    plugin.description = "scalar reference loops over host memory (the SDK's example plugin)";
    plugin.create = create;
    plugin.destroy = destroy;
    plugin.soc_name = soc_name;
    plugin.dtype_mask = dtype_mask;
    plugin.last_error = sdk::last_error;
    plugin.device = &kDevice;
    plugin.ops = kOpPointers;
    plugin.op_count = std::size(kOpPointers);
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
