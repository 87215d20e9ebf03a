// The first-phase checks of both binary cross-entropy ops (SPEC.md sections 2
// and 3, in that order) and the descriptor a backend receives.
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include "op_launch.h"

namespace nnplug {

struct BceCall {
    const char* api;               // for messages: "aclnnBinaryCrossEntropyBackward"
    nnplug_op_kind op;
    const aclTensor* grad_output;  // backward only
    const aclTensor* self;
    const aclTensor* target;
    const aclTensor* weight;       // optional
    int64_t reduction;
    const aclTensor* out;
};

// Runs the checks; on success fills desc and tells whether self is empty.
// On failure returns the status and leaves one message.
aclnnStatus plan_bce(const BceCall& call, const DeviceTraits& device, nnplug_op_desc& desc,
                     bool& empty_self);

}  // namespace nnplug
