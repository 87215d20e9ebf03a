#include "bce_kernels.h"

#include <nnplug/bce_math.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>

#include "strided_runs.h"

namespace nnplug::cpu {
namespace {

// Elements converted per step: small enough for the stack and L1, large enough to amortize.
constexpr int64_t kBlock = 1024;

char* element_address(const nnplug_tensor& t, int64_t element) {
    return static_cast<char*>(t.data) + element * static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}

template <typename Convert, typename Raw>
void gather(const Raw* source, int64_t stride, int64_t count, float* into, Convert convert) {
    if (stride == 0) {
        std::fill(into, into + count, convert(source[0]));
    } else {
        for (int64_t i = 0; i < count; ++i) into[i] = convert(source[i * stride]);
    }
}

// count float32 values of operand t from element `first` on, stepping by stride:
// a pointer straight into memory when it is contiguous float32, else a converted copy.
const float* load_block(const nnplug_tensor& t, int64_t first, int64_t stride, int64_t count, float* buffer) {
    const char* source = element_address(t, first);
    switch (t.dtype) {
    case NNPLUG_DTYPE_F32:
        if (stride == 1) return reinterpret_cast<const float*>(source);
        gather(reinterpret_cast<const float*>(source), stride, count, buffer, [](float v) { return v; });
        return buffer;
    case NNPLUG_DTYPE_F16:
        gather(reinterpret_cast<const uint16_t*>(source), stride, count, buffer, f16_to_f32);
        return buffer;
    default:
        gather(reinterpret_cast<const uint16_t*>(source), stride, count, buffer, bf16_to_f32);
        return buffer;
    }
}

// Where to compute the out block: straight into contiguous float32 out, else into buffer.
float* out_block(const nnplug_tensor& t, int64_t first, int64_t stride, float* buffer) {
    if (t.dtype == NNPLUG_DTYPE_F32 && stride == 1) return reinterpret_cast<float*>(element_address(t, first));
    return buffer;
}

void store_block(const nnplug_tensor& t, int64_t first, int64_t stride, int64_t count, const float* values) {
    if (t.dtype == NNPLUG_DTYPE_F32 && stride == 1) return;  // computed in place
    void* base = element_address(t, first);
    for (int64_t i = 0; i < count; ++i) store_from_f32(base, t.dtype, i * stride, values[i]);
}

struct BlockBuffers {
    alignas(64) float grad[kBlock];
    alignas(64) float self[kBlock];
    alignas(64) float target[kBlock];
    alignas(64) float weight[kBlock];
    alignas(64) float out[kBlock];
};

// Calls compute(n, g, s, t, w, out) on float32 blocks covering [begin, end).
// g or w is null where the operand is absent.
template <typename Compute>
void for_each_block(const nnplug_op_desc& desc, int64_t begin, int64_t end, bool writes_out, Compute&& compute) {
    BlockBuffers buffers;
    const bool has_grad = desc.grad_output.present != 0;
    const bool has_weight = desc.weight.present != 0;
    for_each_run(desc, begin, end, [&](const auto& offset, const auto& inner, int64_t length) {
        for (int64_t done = 0; done < length; done += kBlock) {
            const int64_t n = std::min(kBlock, length - done);
            const auto at = [&](int o) { return offset[o] + done * inner[o]; };
            const float* g = has_grad ? load_block(desc.grad_output, at(kGrad), inner[kGrad], n, buffers.grad) : nullptr;
            const float* s = load_block(desc.self, at(kSelf), inner[kSelf], n, buffers.self);
            const float* t = load_block(desc.target, at(kTarget), inner[kTarget], n, buffers.target);
            const float* w = has_weight ? load_block(desc.weight, at(kWeight), inner[kWeight], n, buffers.weight) : nullptr;
            float* out = writes_out ? out_block(desc.out, at(kOut), inner[kOut], buffers.out) : buffers.out;
            compute(n, g, s, t, w, out);
            if (writes_out) store_block(desc.out, at(kOut), inner[kOut], n, out);
        }
    });
}

void backward_block(int64_t n, const float* g, const float* s, const float* t, const float* w, float scale,
                    float* out) {
    if (w != nullptr) {
        for (int64_t i = 0; i < n; ++i) out[i] = bce_backward(g[i], w[i], s[i], t[i], scale);
    } else {  // weight 1: g * 1 is g exactly, so skipping the product keeps the bits
        for (int64_t i = 0; i < n; ++i) out[i] = bce_backward(g[i], 1.0f, s[i], t[i], scale);
    }
}

void forward_block(int64_t n, const float* s, const float* t, const float* w, float* out) {
    if (w != nullptr) {
        for (int64_t i = 0; i < n; ++i) out[i] = bce_forward(w[i], s[i], t[i]);
    } else {
        for (int64_t i = 0; i < n; ++i) out[i] = bce_forward(1.0f, s[i], t[i]);
    }
}

}  // namespace

uint64_t bce_workspace_bytes(const nnplug_op_desc& desc) {
    if (desc.op != NNPLUG_OP_BCE_FORWARD || desc.reduction == NNPLUG_REDUCTION_NONE) return 0;
    const int64_t chunks = (desc.numel + kReduceChunk - 1) / kReduceChunk;
    return chunks > 1 ? static_cast<uint64_t>(chunks) * sizeof(double) : 0;
}

void bce_backward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end) {
    const float scale = desc.reduction == NNPLUG_REDUCTION_MEAN ? bce_mean_scale(desc.reduce_count) : 1.0f;
    for_each_block(desc, begin, end, true,
                   [&](int64_t n, const float* g, const float* s, const float* t, const float* w, float* out) {
                       backward_block(n, g, s, t, w, scale, out);
                   });
}

void bce_forward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end) {
    for_each_block(desc, begin, end, true,
                   [&](int64_t n, const float*, const float* s, const float* t, const float* w, float* out) {
                       forward_block(n, s, t, w, out);
                   });
}

double bce_forward_chunk_sum(const nnplug_op_desc& desc, int64_t chunk) {
    const int64_t begin = chunk * kReduceChunk;
    const int64_t end = std::min(desc.numel, begin + kReduceChunk);
    // Four double accumulators in a fixed order: exact enough for 16K float terms.
    double lanes[4] = {0, 0, 0, 0};
    for_each_block(desc, begin, end, false,
                   [&](int64_t n, const float*, const float* s, const float* t, const float* w, float* loss) {
                       forward_block(n, s, t, w, loss);
                       int64_t i = 0;
                       for (; i + 4 <= n; i += 4)
                           for (int lane = 0; lane < 4; ++lane) lanes[lane] += loss[i + lane];
                       for (; i < n; ++i) lanes[i % 4] += loss[i];
                   });
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

namespace {
double pairwise_sum(const double* values, int64_t count) {
    if (count <= 8) {
        double sum = 0;
        for (int64_t i = 0; i < count; ++i) sum += values[i];
        return sum;
    }
    const int64_t half = count / 2;
    return pairwise_sum(values, half) + pairwise_sum(values + half, count - half);
}
}  // namespace

void bce_forward_finish(const nnplug_op_desc& desc, const double* partials, int64_t count) {
    double total = pairwise_sum(partials, count);
    if (desc.reduction == NNPLUG_REDUCTION_MEAN) total /= static_cast<double>(desc.reduce_count);
    store_from_f32(element_address(desc.out, desc.out.offset), desc.out.dtype, 0, static_cast<float>(total));
}

}  // namespace nnplug::cpu
