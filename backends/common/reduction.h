// The last step of a reducing op, shared by the backends: the partial sums (one per
// fixed chunk or core, in double) added pairwise in a fixed order, divided by N for
// the mean, rounded once into the reduced output's dtype.
#pragma once

#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <cstdint>

#include "pairwise_sum.h"

namespace nnplug::common {

// The reduced result of partials[0..count) written to the op's reduced output `out`.
inline void finish_reduction(const nnplug_op_desc& desc, const nnplug_tensor& out, const double* partials,
                             int64_t count) {
    double total = pairwise_sum(partials, count);
    if (sdk::reduction(desc) == NNPLUG_REDUCTION_MEAN) total /= static_cast<double>(sdk::reduce_count(desc));
    store_from_f32(sdk::element_address_mutable(out, out.offset), out.dtype, 0, static_cast<float>(total));
}

}  // namespace nnplug::common
