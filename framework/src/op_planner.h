// The generic first phase: applies an op's schema to a call, in the order the schema
// lists its checks, and builds the descriptor a backend receives.
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include "op_schema.h"

namespace nnplug {

// What the first phase checks against the device: its SoC and the dtypes it computes.
struct DeviceTraits {
    const char* soc_name;
    uint32_t dtype_mask;
};

// Runs the checks; on success fills desc (broadcast-planned and coalesced) and tells
// whether self is empty (nothing to run). On failure returns the status and leaves
// one message.
aclnnStatus plan_op(const OpSchema& schema, const OpCall& call, const DeviceTraits& device,
                    nnplug_op_desc& desc, bool& empty_self);

}  // namespace nnplug
