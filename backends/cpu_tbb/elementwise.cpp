#include "elementwise.h"

#include <hwy/cache_control.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <algorithm>

#include "dtype_convert_simd.h"
#include "reduction.h"
#include "strided_runs.h"

namespace nnplug::cpu {
namespace {

// Elements per block of the general path: the float32 blocks of an op's operands stay in L1.
constexpr int64_t kBlock = 1024;

// Above this many bytes touched per call the output goes around the caches.
constexpr int64_t kStreamingBytes = int64_t{48} << 20;

bool wants_streaming(const nnplug_op_desc& desc) {
    // No dtype is wider than 4 bytes: most calls are decided without the loop.
    if (desc.numel * 4 * desc.operand_count < kStreamingBytes) return false;
    int64_t bytes = 0;
    for (int slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& t = desc.operands[slot];
        if (sdk::present(t) && !sdk::reduced(t)) bytes += static_cast<int64_t>(nnplug_dtype_size(t.dtype));
    }
    return bytes * desc.numel >= kStreamingBytes;
}

// count float32 values of t from element `first` on, stepping by stride: a pointer
// straight into memory for contiguous float32, else a converted copy in block.
const float* widen(const nnplug_tensor& t, int64_t first, int64_t stride, int64_t count, float* block) {
    const char* source = sdk::element_address(t, first);
    if (stride == 1) {
        if (t.dtype == NNPLUG_DTYPE_F32) return reinterpret_cast<const float*>(source);
        simd::convert_to_f32(t.dtype, source, block, count);
    } else if (stride == 0) {
        std::fill(block, block + count, load_as_f32(source, t.dtype, 0));
    } else {
        for (int64_t i = 0; i < count; ++i) block[i] = load_as_f32(source, t.dtype, i * stride);
    }
    return block;
}

struct Blocks {
    alignas(64) float input[kMaxInputs][kBlock];
    alignas(64) float out[kBlock];
};

}  // namespace

bool reduces(const VectorKernels& kernels, const nnplug_op_desc& desc) {
    return sdk::reduced(desc.operands[kernels.operands.out]);
}

uint64_t workspace_bytes(const VectorKernels& kernels, const nnplug_op_desc& desc) {
    const int64_t chunks = reduces(kernels, desc) ? (desc.numel + kReduceChunk - 1) / kReduceChunk : 0;
    return chunks > 1 ? static_cast<uint64_t>(chunks) * sizeof(double) : 0;
}

ElementwiseCall::ElementwiseCall(const VectorKernels& kernels, const nnplug_op_desc& desc)
    : kernels_(kernels), desc_(desc), reduces_(cpu::reduces(kernels, desc)), scale_(sdk::scale(desc)) {
    if (desc.ndim > 0)
        for (int slot = 0; slot < desc.operand_count; ++slot)
            inner_[slot] = desc.operands[slot].strides[desc.ndim - 1];
    plan_rounding();
    in_place_ = !rounds_ && plan_in_place();
    in_place_run_.stream_out = in_place_ && !reduces_ && wants_streaming(desc);
    in_place_run_.desc = &desc_;
}

// Inputs outside the promotion whose dtype is not the promoted one are rounded to it,
// unless it is float32 (which holds every 16-bit value exactly).
void ElementwiseCall::plan_rounding() {
    const OpOperands& operands = kernels_.operands;
    const int64_t promoted = nnplug_attr_i64(&desc_, NNPLUG_ATTR_PROMOTED_DTYPE, NNPLUG_DTYPE_F32);
    for (int i = 0; i < operands.input_count; ++i) {
        const int slot = operands.inputs[i].slot;
        round_to_[i] = NNPLUG_DTYPE_F32;
        if ((operands.rounded_to_promoted & slot_bit(slot)) == 0 || !nnplug_operand_present(&desc_, slot))
            continue;
        if (promoted != NNPLUG_DTYPE_F32 && desc_.operands[slot].dtype != promoted) {
            round_to_[i] = static_cast<int32_t>(promoted);
            rounds_ = true;
        }
    }
}

// Whether the kernels can read every run in place: one dtype, each input in an access
// they take, the output (unless reduced) contiguous.
bool ElementwiseCall::plan_in_place() {
    const OpOperands& operands = kernels_.operands;
    int32_t dtype = -1;
    for (int i = 0; i < operands.input_count; ++i) {
        const InputOperand& input = operands.inputs[i];
        OperandAccess access = OperandAccess::kAbsent;
        if (nnplug_operand_present(&desc_, input.slot)) {
            const nnplug_tensor& t = desc_.operands[input.slot];
            if (dtype < 0) dtype = t.dtype;
            const int64_t stride = inner_[input.slot];
            if (t.dtype != dtype || (stride != 0 && stride != 1)) return false;
            access = stride == 0 ? OperandAccess::kSplat : OperandAccess::kContiguous;
            in_place_inputs_[in_place_count_++] = {input.slot, static_cast<const char*>(t.data),
                                                   static_cast<int64_t>(nnplug_dtype_size(t.dtype))};
        }
        if (!allows(input.vector_access, access)) return false;
        in_place_run_.access[input.slot] = access;
    }
    if (dtype < 0) return false;
    if (!reduces_ && (desc_.operands[operands.out].dtype != dtype || inner_[operands.out] != 1)) return false;
    in_place_run_.dtype = dtype;
    return true;
}

// The general path for one run: each present input's block widened to contiguous
// float32 (splat where the kernels take it), the kernels run on those, the output
// block written back in out's dtype and layout.
double ElementwiseCall::compute_blocks(const common::SlotOffsets& offset, int64_t length) const {
    const OpOperands& operands = kernels_.operands;
    Blocks blocks;
    float splat[kMaxInputs];
    double sum = 0;
    for (int64_t done = 0; done < length; done += kBlock) {
        const int64_t n = std::min(kBlock, length - done);
        VectorRun run;
        run.desc = &desc_;
        run.length = n;
        for (int i = 0; i < operands.input_count; ++i) {
            const int slot = operands.inputs[i].slot;
            if (!nnplug_operand_present(&desc_, slot)) continue;  // stays kAbsent
            const nnplug_tensor& t = desc_.operands[slot];
            const int64_t first = offset[slot] + done * inner_[slot];
            if (inner_[slot] == 0 && allows(operands.inputs[i].vector_access, OperandAccess::kSplat)) {
                splat[i] = load_as_f32(sdk::element_address(t, first), t.dtype, 0);
                if (round_to_[i] != NNPLUG_DTYPE_F32) simd::round_to_dtype(round_to_[i], &splat[i], 1);
                run.input[slot] = &splat[i];
                run.access[slot] = OperandAccess::kSplat;
            } else {
                const float* values = widen(t, first, inner_[slot], n, blocks.input[i]);
                if (round_to_[i] != NNPLUG_DTYPE_F32) {
                    if (values != blocks.input[i]) std::copy(values, values + n, blocks.input[i]);
                    simd::round_to_dtype(round_to_[i], blocks.input[i], n);
                    values = blocks.input[i];
                }
                run.input[slot] = values;
                run.access[slot] = OperandAccess::kContiguous;
            }
        }
        if (reduces_) {
            sum += kernels_.sum(run);
            continue;
        }
        const nnplug_tensor& out = desc_.operands[operands.out];
        const int64_t out_stride = inner_[operands.out];
        char* into = sdk::element_address_mutable(out, offset[operands.out] + done * out_stride);
        const bool direct = out.dtype == NNPLUG_DTYPE_F32 && out_stride == 1;
        run.out = direct ? static_cast<void*>(into) : blocks.out;
        kernels_.map(run, scale_);
        if (direct) continue;
        if (out_stride == 1) {
            simd::convert_from_f32(out.dtype, blocks.out, into, n);
        } else {
            for (int64_t i = 0; i < n; ++i) store_from_f32(into, out.dtype, i * out_stride, blocks.out[i]);
        }
    }
    return sum;
}

double ElementwiseCall::compute(int64_t begin, int64_t end) const {
    using common::SlotOffsets;
    double sum = 0;
    if (!in_place_) {
        common::for_each_run(desc_, begin, end,
                             [&](const SlotOffsets& offset, const SlotOffsets&, int64_t length) {
                                 sum += compute_blocks(offset, length);
                             });
        return sum;
    }
    const int out_slot = kernels_.operands.out;
    const nnplug_tensor& out = desc_.operands[out_slot];
    const int64_t out_bytes = static_cast<int64_t>(nnplug_dtype_size(out.dtype));
    VectorRun run = in_place_run_;
    const auto read_run = [&](const SlotOffsets& offset, const SlotOffsets&, int64_t length) {
        run.length = length;
        for (int i = 0; i < in_place_count_; ++i) {
            const InPlaceInput& input = in_place_inputs_[i];
            run.input[input.slot] = input.data + offset[input.slot] * input.element_bytes;
        }
        if (reduces_) {
            sum += kernels_.sum(run);
            return;
        }
        run.out = static_cast<char*>(out.data) + offset[out_slot] * out_bytes;
        kernels_.map(run, scale_);
    };
    common::for_each_run(desc_, begin, end, read_run);
    if (run.stream_out) hwy::FlushStream();
    return sum;
}

void ElementwiseCall::compute_range(int64_t begin, int64_t end) const {
    compute(begin, end);
}

double ElementwiseCall::sum_chunk(int64_t chunk) const {
    const int64_t begin = chunk * kReduceChunk;
    return compute(begin, std::min(desc_.numel, begin + kReduceChunk));
}

void ElementwiseCall::finish_reduction(const double* partials, int64_t count) const {
    common::finish_reduction(desc_, desc_.operands[kernels_.operands.out], partials, count);
}

}  // namespace nnplug::cpu
