#include "bce_kernels.h"

#include <nnplug/ops/bce_math.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>

#include "bce_simd.h"
#include "pairwise_sum.h"
#include "strided_runs.h"

namespace nnplug::cpu {
namespace {

enum class Work { kBackward, kForward, kForwardSum };

// Elements per block of the general path: five float32 blocks stay in L1.
constexpr int64_t kBlock = 1024;

const char* element_address(const nnplug_tensor& t, int64_t element) {
    return static_cast<const char*>(t.data) + element * static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}
char* element_address_mutable(const nnplug_tensor& t, int64_t element) {
    return static_cast<char*>(t.data) + element * static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}

Feed feed_of(const nnplug_tensor& t, int64_t stride) {
    if (t.present == 0) return Feed::kAbsent;
    return stride == 0 ? Feed::kSplat : Feed::kContiguous;
}

// A run the vector kernels take as it lies in memory: one dtype, self/target/out
// contiguous, gradOutput and weight contiguous or one value.
bool is_uniform(const nnplug_op_desc& desc, const std::array<int64_t, kOperands>& inner, bool writes_out) {
    const int32_t dtype = desc.self.dtype;
    if (desc.target.dtype != dtype || inner[kSelf] != 1 || inner[kTarget] != 1) return false;
    if (writes_out && (desc.out.dtype != dtype || inner[kOut] != 1)) return false;
    const auto side_ok = [&](const nnplug_tensor& t, int o) {
        return t.present == 0 || (t.dtype == dtype && (inner[o] == 0 || inner[o] == 1));
    };
    return side_ok(desc.grad_output, kGrad) && side_ok(desc.weight, kWeight);
}

// count float32 values of operand t from element `first` on, stepping by stride:
// a pointer straight into memory for contiguous float32, else a converted copy.
const float* load_block(const nnplug_tensor& t, int64_t first, int64_t stride, int64_t count, float* buffer) {
    const char* source = element_address(t, first);
    if (stride == 1) {
        if (t.dtype == NNPLUG_DTYPE_F32) return reinterpret_cast<const float*>(source);
        convert_to_f32(t.dtype, source, buffer, count);
    } else if (stride == 0) {
        std::fill(buffer, buffer + count, load_as_f32(source, t.dtype, 0));
    } else {
        for (int64_t i = 0; i < count; ++i) buffer[i] = load_as_f32(source, t.dtype, i * stride);
    }
    return buffer;
}

struct BlockBuffers {
    alignas(64) float grad[kBlock];
    alignas(64) float self[kBlock];
    alignas(64) float target[kBlock];
    alignas(64) float weight[kBlock];
    alignas(64) float out[kBlock];
};

// The general path for one run: converts blocks to contiguous float32, runs the
// vector kernel on them and writes the out block back in out's dtype and layout.
double run_blocks(const nnplug_op_desc& desc, const std::array<int64_t, kOperands>& offset,
                  const std::array<int64_t, kOperands>& inner, int64_t length, Work work, float scale) {
    BlockBuffers buffers;
    double sum = 0;
    float grad_value = 0, weight_value = 0;
    for (int64_t done = 0; done < length; done += kBlock) {
        const int64_t n = std::min(kBlock, length - done);
        const auto at = [&](int o) { return offset[o] + done * inner[o]; };
        UniformRun run;
        run.dtype = NNPLUG_DTYPE_F32;
        run.length = n;
        const auto side = [&](const nnplug_tensor& t, int o, float& value, float* buffer, const void*& data) {
            const Feed feed = feed_of(t, inner[o]);
            if (feed == Feed::kSplat) {
                value = load_as_f32(element_address(t, at(o)), t.dtype, 0);
                data = &value;
            } else if (feed == Feed::kContiguous) {
                data = load_block(t, at(o), inner[o], n, buffer);
            }
            return feed;
        };
        if (work == Work::kBackward) run.grad_feed = side(desc.grad_output, kGrad, grad_value, buffers.grad, run.grad);
        run.weight_feed = side(desc.weight, kWeight, weight_value, buffers.weight, run.weight);
        run.self = load_block(desc.self, at(kSelf), inner[kSelf], n, buffers.self);
        run.target = load_block(desc.target, at(kTarget), inner[kTarget], n, buffers.target);
        if (work == Work::kForwardSum) {
            sum += forward_run_sum(run);
            continue;
        }
        const bool direct = desc.out.dtype == NNPLUG_DTYPE_F32 && inner[kOut] == 1;
        run.out = direct ? element_address_mutable(desc.out, at(kOut)) : static_cast<void*>(buffers.out);
        if (work == Work::kBackward) backward_run(run, scale);
        else forward_run(run);
        if (direct) continue;
        char* into = element_address_mutable(desc.out, at(kOut));
        if (inner[kOut] == 1) {
            convert_from_f32(desc.out.dtype, buffers.out, into, n);
        } else {
            for (int64_t i = 0; i < n; ++i) store_from_f32(into, desc.out.dtype, i * inner[kOut], buffers.out[i]);
        }
    }
    return sum;
}

// Above this many bytes touched per call the output goes around the caches.
constexpr int64_t kStreamingBytes = int64_t{48} << 20;

bool wants_streaming(const nnplug_op_desc& desc) {
    int64_t bytes = 0;
    for (const nnplug_tensor* t : operands_of(desc))
        if (t->present != 0) bytes += static_cast<int64_t>(nnplug_dtype_size(t->dtype));
    return bytes * desc.numel >= kStreamingBytes;
}

double run_range(const nnplug_op_desc& desc, int64_t begin, int64_t end, Work work) {
    const float scale = desc.reduction == NNPLUG_REDUCTION_MEAN ? bce_mean_scale(desc.reduce_count) : 1.0f;
    const bool writes_out = work != Work::kForwardSum;
    const bool stream = writes_out && wants_streaming(desc);
    double sum = 0;
    for_each_run(desc, begin, end, [&](const auto& offset, const auto& inner, int64_t length) {
        if (!is_uniform(desc, inner, writes_out)) {
            sum += run_blocks(desc, offset, inner, length, work, scale);
            return;
        }
        UniformRun run;
        run.dtype = desc.self.dtype;
        run.length = length;
        if (work == Work::kBackward) {
            run.grad_feed = feed_of(desc.grad_output, inner[kGrad]);
            run.grad = element_address(desc.grad_output, offset[kGrad]);
        }
        run.self = element_address(desc.self, offset[kSelf]);
        run.target = element_address(desc.target, offset[kTarget]);
        run.weight_feed = feed_of(desc.weight, inner[kWeight]);
        if (desc.weight.present != 0) run.weight = element_address(desc.weight, offset[kWeight]);
        run.out = writes_out ? element_address_mutable(desc.out, offset[kOut]) : nullptr;
        run.stream_out = stream;
        switch (work) {
        case Work::kBackward: backward_run(run, scale); break;
        case Work::kForward: forward_run(run); break;
        case Work::kForwardSum: sum += forward_run_sum(run); break;
        }
    });
    if (stream) finish_streaming();
    return sum;
}

}  // namespace

uint64_t bce_workspace_bytes(const nnplug_op_desc& desc) {
    if (desc.op != NNPLUG_OP_BCE_FORWARD || desc.reduction == NNPLUG_REDUCTION_NONE) return 0;
    const int64_t chunks = (desc.numel + kReduceChunk - 1) / kReduceChunk;
    return chunks > 1 ? static_cast<uint64_t>(chunks) * sizeof(double) : 0;
}

void bce_backward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end) {
    run_range(desc, begin, end, Work::kBackward);
}

void bce_forward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end) {
    run_range(desc, begin, end, Work::kForward);
}

double bce_forward_chunk_sum(const nnplug_op_desc& desc, int64_t chunk) {
    const int64_t begin = chunk * kReduceChunk;
    return run_range(desc, begin, std::min(desc.numel, begin + kReduceChunk), Work::kForwardSum);
}

void bce_forward_finish(const nnplug_op_desc& desc, const double* partials, int64_t count) {
    double total = pairwise_sum(partials, count);
    if (desc.reduction == NNPLUG_REDUCTION_MEAN) total /= static_cast<double>(desc.reduce_count);
    store_from_f32(element_address_mutable(desc.out, desc.out.offset), desc.out.dtype, 0, static_cast<float>(total));
}

}  // namespace nnplug::cpu
