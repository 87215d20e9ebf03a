// The aclnn ops the Python package can call, each reduced to one shape of call: its input
// operands in the op's order (a null for an absent optional one), the reduction and `out`.
#pragma once

#include <cstdint>

#include "aclnn/acl_meta.h"

namespace nnplug::python {

using GetWorkspaceFn = aclnnStatus (*)(const aclTensor* const* inputs, int64_t reduction, aclTensor* out,
                                       uint64_t* workspace_size, aclOpExecutor** executor);
using RunFn = aclnnStatus (*)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                              aclrtStream stream);

struct OpEntry {
    const char* name;  // the aclnn name, e.g. "aclnnBinaryCrossEntropy"
    int inputs;        // operands before `reduction`
    GetWorkspaceFn get_workspace;
    RunFn run;
};

// The entry of an op by its aclnn name, or null.
const OpEntry* find_op(const char* name);

// Every entry, for listing; `count` receives their number.
const OpEntry* all_ops(int* count);

}  // namespace nnplug::python
