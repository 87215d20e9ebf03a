// The aclnn ops the Python package can call: every loss the published op schemas
// (nnplug/op_schema.h) list, each reduced to one shape of call: its input operands in slot
// order (a null for an absent optional one), the reduction and `out`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"

namespace nnplug::python {

using RunFn = aclnnStatus (*)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                              aclrtStream stream);

struct OpEntry {
    std::string name;            // the aclnn name, e.g. "aclnnBinaryCrossEntropy"
    int inputs;                  // operands before `reduction`
    void* get_workspace_symbol;  // <name>GetWorkspaceSize in libnnplug
    RunFn run;

    // <name>GetWorkspaceSize(inputs..., reduction, out, workspace_size, executor).
    aclnnStatus get_workspace(const aclTensor* const* in, int64_t reduction, aclTensor* out,
                              uint64_t* workspace_size, aclOpExecutor** executor) const;
};

// The entry of an op by its aclnn name, or null.
const OpEntry* find_op(const std::string& name);

// Every entry, in op kind order.
const std::vector<OpEntry>& all_ops();

}  // namespace nnplug::python
