// The op-agnostic driver of cpu_tbb: walks a range of a call's iteration space in runs,
// hands runs the vector kernels can read in place straight to them and converts the
// others block by block to float32 first; reductions sum fixed chunks.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>

#include "strided_runs.h"
#include "vector_run.h"

namespace nnplug::cpu {

// Reductions sum fixed chunks of the linear index (never thread-dependent), each into
// a double partial, then add the partials pairwise (common::finish_reduction).
constexpr int64_t kReduceChunk = 16384;

// Whether the call reduces to its one output element.
bool reduces(const VectorKernels& kernels, const nnplug_op_desc& desc);

// Workspace of a call: the partials of a reduction with more than one chunk.
uint64_t workspace_bytes(const VectorKernels& kernels, const nnplug_op_desc& desc);

// One launch of an elementwise op, planned once: what all its runs share. Its
// methods may run on several threads at once; kernels and desc must outlive it.
class ElementwiseCall {
public:
    ElementwiseCall(const VectorKernels& kernels, const nnplug_op_desc& desc);

    bool reduces() const { return reduces_; }
    // Whether the vector kernels read the call's runs in place (else block by block in float32).
    bool reads_in_place() const { return in_place_; }
    int64_t reduce_chunks() const { return (desc_.numel + kReduceChunk - 1) / kReduceChunk; }

    // The output of elements [begin, end) of a call that does not reduce.
    void compute_range(int64_t begin, int64_t end) const;
    // The op's values over chunk `chunk` of a reducing call, summed in double.
    double sum_chunk(int64_t chunk) const;
    // The reduced output from the partials of every chunk.
    void finish_reduction(const double* partials, int64_t count) const;

private:
    // An input read in place: its first element of a run is data + offset * element_bytes.
    struct InPlaceInput {
        int slot;
        const char* data;
        int64_t element_bytes;
    };

    void plan_rounding();
    bool plan_in_place();
    double compute(int64_t begin, int64_t end) const;
    double compute_blocks(const common::SlotOffsets& offset, int64_t length) const;

    const VectorKernels& kernels_;
    const nnplug_op_desc& desc_;
    bool reduces_;
    float scale_;
    common::SlotOffsets inner_{};  // every operand's innermost stride: the same for all runs
    // Per input (OpOperands order), the dtype its widened values are rounded to; float32: none.
    std::array<int32_t, kMaxInputs> round_to_{};
    bool rounds_ = false;
    bool in_place_ = false;
    VectorRun in_place_run_;  // the dtype, accesses and streaming of in-place runs
    std::array<InPlaceInput, kMaxInputs> in_place_inputs_;
    int in_place_count_ = 0;
};

}  // namespace nnplug::cpu
