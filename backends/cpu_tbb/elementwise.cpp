#include "elementwise.h"

#include <hwy/cache_control.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <algorithm>

#include "dtype_convert_simd.h"
#include "strided_runs.h"

namespace nnplug::cpu {
namespace {

using common::SlotOffsets;

// Elements per block of the general path: the float32 blocks of an op's operands stay in L1.
constexpr int64_t kBlock = 1024;

// Above this many bytes touched per call the output goes around the caches.
constexpr int64_t kStreamingBytes = int64_t{48} << 20;

enum class Result { kOutput, kSum };

bool wants_streaming(const nnplug_op_desc& desc) {
    int64_t bytes = 0;
    for (int slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& t = desc.operands[slot];
        if (sdk::present(t) && !sdk::reduced(t)) bytes += static_cast<int64_t>(nnplug_dtype_size(t.dtype));
    }
    return bytes * desc.numel >= kStreamingBytes;
}

// Every operand's stride along the innermost dimension: the same for every run of a call.
SlotOffsets inner_strides(const nnplug_op_desc& desc) {
    SlotOffsets inner{};
    if (desc.ndim > 0)
        for (int slot = 0; slot < desc.operand_count; ++slot) inner[slot] = desc.operands[slot].strides[desc.ndim - 1];
    return inner;
}

// Whether the kernels can read every run of the call in place (one dtype, each input
// in an access they take, the output contiguous); if so, run gets the dtype and accesses.
bool plan_in_place(const OpOperands& operands, const nnplug_op_desc& desc, const SlotOffsets& inner,
                   bool writes_out, VectorRun& run) {
    int32_t dtype = -1;
    for (int i = 0; i < operands.input_count; ++i) {
        const InputOperand& input = operands.inputs[i];
        OperandAccess access = OperandAccess::kAbsent;
        if (nnplug_operand_present(&desc, input.slot)) {
            const int32_t input_dtype = desc.operands[input.slot].dtype;
            if (dtype < 0) dtype = input_dtype;
            const int64_t stride = inner[input.slot];
            if (input_dtype != dtype || (stride != 0 && stride != 1)) return false;
            access = stride == 0 ? OperandAccess::kSplat : OperandAccess::kContiguous;
        }
        if (!allows(input.vector_access, access)) return false;
        run.access[input.slot] = access;
    }
    if (dtype < 0) return false;
    if (writes_out && (desc.operands[operands.out].dtype != dtype || inner[operands.out] != 1)) return false;
    run.dtype = dtype;
    return true;
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

// The general path for one run: each present input's block widened to contiguous
// float32 (splat where the kernels take it), the kernels run on those, the output
// block written back in out's dtype and layout.
double compute_blocks(const VectorKernels& kernels, const nnplug_op_desc& desc, const SlotOffsets& offset,
                      const SlotOffsets& inner, int64_t length, Result result, float scale) {
    const OpOperands& operands = kernels.operands;
    Blocks blocks;
    float splat[kMaxInputs];
    double sum = 0;
    for (int64_t done = 0; done < length; done += kBlock) {
        const int64_t n = std::min(kBlock, length - done);
        VectorRun run;
        run.length = n;
        for (int i = 0; i < operands.input_count; ++i) {
            const int slot = operands.inputs[i].slot;
            if (!nnplug_operand_present(&desc, slot)) continue;  // stays kAbsent
            const nnplug_tensor& t = desc.operands[slot];
            const int64_t first = offset[slot] + done * inner[slot];
            if (inner[slot] == 0 && allows(operands.inputs[i].vector_access, OperandAccess::kSplat)) {
                splat[i] = load_as_f32(sdk::element_address(t, first), t.dtype, 0);
                run.input[slot] = &splat[i];
                run.access[slot] = OperandAccess::kSplat;
            } else {
                run.input[slot] = widen(t, first, inner[slot], n, blocks.input[i]);
                run.access[slot] = OperandAccess::kContiguous;
            }
        }
        if (result == Result::kSum) {
            sum += kernels.sum(run);
            continue;
        }
        const nnplug_tensor& out = desc.operands[operands.out];
        const int64_t out_stride = inner[operands.out];
        char* into = sdk::element_address_mutable(out, offset[operands.out] + done * out_stride);
        const bool direct = out.dtype == NNPLUG_DTYPE_F32 && out_stride == 1;
        run.out = direct ? static_cast<void*>(into) : blocks.out;
        kernels.map(run, scale);
        if (direct) continue;
        if (out_stride == 1) {
            simd::convert_from_f32(out.dtype, blocks.out, into, n);
        } else {
            for (int64_t i = 0; i < n; ++i) store_from_f32(into, out.dtype, i * out_stride, blocks.out[i]);
        }
    }
    return sum;
}

double compute(const VectorKernels& kernels, const nnplug_op_desc& desc, int64_t begin, int64_t end,
               Result result) {
    const OpOperands& operands = kernels.operands;
    const bool writes_out = result == Result::kOutput;
    const float scale = sdk::scale(desc);
    const SlotOffsets inner = inner_strides(desc);
    VectorRun run;
    const bool in_place = plan_in_place(operands, desc, inner, writes_out, run);
    run.stream_out = in_place && writes_out && wants_streaming(desc);
    double sum = 0;
    common::for_each_run(desc, begin, end, [&](const SlotOffsets& offset, const SlotOffsets&, int64_t length) {
        if (!in_place) {
            sum += compute_blocks(kernels, desc, offset, inner, length, result, scale);
            return;
        }
        run.length = length;
        for (int i = 0; i < operands.input_count; ++i) {
            const int slot = operands.inputs[i].slot;
            if (run.access[slot] != OperandAccess::kAbsent)
                run.input[slot] = sdk::element_address(desc.operands[slot], offset[slot]);
        }
        if (result == Result::kSum) {
            sum += kernels.sum(run);
            return;
        }
        run.out = sdk::element_address_mutable(desc.operands[operands.out], offset[operands.out]);
        kernels.map(run, scale);
    });
    if (run.stream_out) hwy::FlushStream();
    return sum;
}

}  // namespace

bool reduces(const VectorKernels& kernels, const nnplug_op_desc& desc) {
    return sdk::reduced(desc.operands[kernels.operands.out]);
}

int64_t reduce_chunks(const nnplug_op_desc& desc) { return (desc.numel + kReduceChunk - 1) / kReduceChunk; }

uint64_t workspace_bytes(const VectorKernels& kernels, const nnplug_op_desc& desc) {
    const int64_t chunks = reduces(kernels, desc) ? reduce_chunks(desc) : 0;
    return chunks > 1 ? static_cast<uint64_t>(chunks) * sizeof(double) : 0;
}

void compute_range(const VectorKernels& kernels, const nnplug_op_desc& desc, int64_t begin, int64_t end) {
    compute(kernels, desc, begin, end, Result::kOutput);
}

double sum_chunk(const VectorKernels& kernels, const nnplug_op_desc& desc, int64_t chunk) {
    const int64_t begin = chunk * kReduceChunk;
    return compute(kernels, desc, begin, std::min(desc.numel, begin + kReduceChunk), Result::kSum);
}

}  // namespace nnplug::cpu
