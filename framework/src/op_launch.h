// The part of the two-phase aclnn protocol that every op shares: turning a checked
// descriptor into an executor (first phase) and running one (second phase).
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include "runtime.h"

namespace nnplug {

// Asks the backend whether it takes desc and how much workspace it needs, then
// hands out an executor. nothing_to_run marks a call with an empty self.
aclnnStatus prepare_executor(Runtime& runtime, const char* api, const nnplug_op_desc& desc,
                             bool nothing_to_run, uint64_t* workspace_size, aclOpExecutor** executor);

// The second phase of api.
aclnnStatus run_executor(const char* api, void* workspace, uint64_t workspace_size,
                         aclOpExecutor* executor, aclrtStream stream);

// What the first phase checks against the device: its SoC and the dtypes it computes.
struct DeviceTraits {
    const char* soc_name;
    uint32_t dtype_mask;
};
DeviceTraits device_traits(const Runtime& runtime);

}  // namespace nnplug
