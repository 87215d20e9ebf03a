#include "operand_memory.h"

#include <cstdio>

#include "error_state.h"
#include "runtime.h"

namespace nnplug {
namespace {

bool present(const nnplug_tensor& operand) {
    return (operand.flags & NNPLUG_OPERAND_PRESENT) != 0;
}

// The bytes an operand's elements reach, [first, last]: strides are never negative.
struct ByteSpan {
    uintptr_t first, last;
};

ByteSpan byte_span(const nnplug_op_desc& desc, const nnplug_tensor& operand) {
    const auto size = static_cast<int64_t>(nnplug_dtype_size(operand.dtype));
    int64_t last = operand.offset;
    for (int32_t k = 0; k < desc.ndim; ++k) last += (desc.dims[k] - 1) * operand.strides[k];
    const auto base = reinterpret_cast<uintptr_t>(operand.data);
    return {base + static_cast<uintptr_t>(operand.offset * size),
            base + static_cast<uintptr_t>((last + 1) * size - 1)};
}

// The same element at every point of the iteration space.
bool same_elements(const nnplug_op_desc& desc, const nnplug_tensor& a, const nnplug_tensor& b) {
    if (a.data != b.data || a.offset != b.offset || nnplug_dtype_size(a.dtype) != nnplug_dtype_size(b.dtype))
        return false;
    for (int32_t k = 0; k < desc.ndim; ++k)
        if (desc.dims[k] > 1 && a.strides[k] != b.strides[k]) return false;
    return true;
}

}  // namespace

aclnnStatus check_operand_devices(const Runtime& runtime, const char* api, const OpSchema& schema,
                                  const nnplug_op_desc& desc, int only) {
    if (!runtime.tracks_memory_owners()) return ACLNN_SUCCESS;
    for (int slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& operand = desc.operands[slot];
        if (!present(operand) || (only >= 0 && slot != only)) continue;
        char what[64];
        std::snprintf(what, sizeof what, "%s data", schema.operands[static_cast<size_t>(slot)].name);
        if (!runtime.check_on_current_device(api, what, operand.data)) return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus check_operand_extents(const Runtime& runtime, const char* api, const OpSchema& schema,
                                  const nnplug_op_desc& desc, int only) {
    for (int slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& operand = desc.operands[slot];
        if (!present(operand) || operand.storage_bytes <= 0 || (only >= 0 && slot != only)) continue;
        const char* name = schema.operands[static_cast<size_t>(slot)].name;
        if (!runtime.check_within_block(api, name, operand.data,
                                        static_cast<uint64_t>(operand.storage_bytes)))
            return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus check_output_overlap(const char* api, const OpSchema& schema, const nnplug_op_desc& desc) {
    for (int o = 0; o < desc.operand_count; ++o) {
        const nnplug_tensor& out = desc.operands[o];
        if (!present(out) || (out.flags & NNPLUG_OPERAND_OUTPUT) == 0) continue;
        const ByteSpan written = byte_span(desc, out);
        for (int i = 0; i < desc.operand_count; ++i) {
            const nnplug_tensor& other = desc.operands[i];
            if (i == o || !present(other)) continue;
            const ByteSpan touched = byte_span(desc, other);
            if (touched.last < written.first || written.last < touched.first) continue;
            if ((other.flags & NNPLUG_OPERAND_OUTPUT) == 0 && same_elements(desc, out, other)) continue;
            set_last_error(
                "{}: {} and {} share memory but are not the same view; an output may only be the exact "
                "same view as an input (elementwise in place)",
                api, schema.operands[static_cast<size_t>(o)].name,
                schema.operands[static_cast<size_t>(i)].name);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

}  // namespace nnplug
