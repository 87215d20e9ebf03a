// What the op-agnostic driver (elementwise.cpp) and an op's vector kernels, compiled
// once per instruction set, share: a run (a 1-d stretch of the iteration space) whose
// operands the kernels read in place, and the table of one op's kernels.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>
#include <vector>

namespace nnplug::cpu {

// How a vector kernel reads an input along a run: not at all (an absent optional
// operand), one value for every element, or element by element.
enum class OperandAccess : int32_t { kAbsent = 0, kSplat = 1, kContiguous = 2 };

constexpr uint32_t access_bit(OperandAccess access) {
    return 1u << static_cast<uint32_t>(access);
}
constexpr bool allows(uint32_t accesses, OperandAccess access) {
    return (accesses & access_bit(access)) != 0;
}

// Sets of accesses; each input takes kContiguous, optional inputs also kAbsent.
constexpr uint32_t kContiguousOnly = access_bit(OperandAccess::kContiguous);
constexpr uint32_t kSplatOrContiguous = kContiguousOnly | access_bit(OperandAccess::kSplat);
constexpr uint32_t kAnyAccess = kSplatOrContiguous | access_bit(OperandAccess::kAbsent);

constexpr int kMaxInputs = NNPLUG_MAX_OPERANDS - 1;

constexpr uint32_t slot_bit(int slot) {
    return 1u << slot;
}

struct InputOperand {
    int slot;                // in nnplug_op_desc.operands
    uint32_t vector_access;  // the accesses the kernels take in place: one instantiation each
};

// The operands of an elementwise op with one output.
struct OpOperands {
    int input_count;
    std::array<InputOperand, kMaxInputs> inputs;  // in the order the op's math takes them
    int out;                                      // slot of the output
    // Inputs (slot_bit per slot) that stay out of the op's type promotion: their values are
    // rounded to NNPLUG_ATTR_PROMOTED_DTYPE before they are widened, as a cast to it would.
    uint32_t rounded_to_promoted = 0;
};

// One run whose operands share a dtype and are read in place, addressed by slot: the
// first element of each contiguous input, the one value of a splat input.
struct VectorRun {
    const nnplug_op_desc* desc = nullptr;  // the call: its attributes (nnplug_attr_f32, ...)
    int32_t dtype = NNPLUG_DTYPE_F32;      // nnplug_dtype of every operand
    int64_t length = 0;
    std::array<const void*, NNPLUG_MAX_OPERANDS> input{};
    std::array<OperandAccess, NNPLUG_MAX_OPERANDS> access{};  // kAbsent unless set
    void* out = nullptr;                                      // contiguous; unused by sums
    bool stream_out = false;  // non-temporal stores: the call is larger than the caches
};

// One op's vector kernels, dispatched at run time to the CPU's best instruction set.
struct VectorKernels {
    OpOperands operands;
    // out = the op, element by element; scale is the call's sdk::scale.
    void (*map)(const VectorRun& run, float scale);
    // The op's values summed in double, in an order fixed by the run alone (null: the
    // op never reduces).
    double (*sum)(const VectorRun& run);
};

// One op's kernels, as an <op>_simd.cpp file registers them.
struct OpKernels {
    int32_t op;  // nnplug_op_kind
    const VectorKernels& (*kernels)();
};

// Each <op>_simd.cpp appends its ops; the build lists the files (nnplug_op_sources).
#define NNPLUG_OP_SOURCE(stem) void register_##stem(std::vector<OpKernels>& ops);
#include "cpu_tbb_op_sources.inc"
#undef NNPLUG_OP_SOURCE

}  // namespace nnplug::cpu
