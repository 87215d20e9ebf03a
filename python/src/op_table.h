// The aclnn ops the Python package can call: every op the published op schemas
// (nnplug/op_schema.h) list with one output, in the last slot: its input operands in slot
// order (a null for an absent optional one), its attributes in signature order (the
// reduction, and any after it, each of its declared type) and `out`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"
#include "nnplug/op_schema.h"

namespace nnplug::python {

using RunFn = aclnnStatus (*)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                              aclrtStream stream);

struct OpEntry {
    std::string name;                // the aclnn name, e.g. "aclnnBinaryCrossEntropy"
    int inputs;                      // the input operands
    const nnplug_op_schema* schema;  // its published schema: the attributes' names and types
    RunFn run;                       // <name> in libnnplug

    // What <name>GetWorkspaceSize(inputs..., attrs..., out, workspace_size, executor) does.
    aclnnStatus get_workspace(const aclTensor* const* in, const std::vector<nnplug_attr_arg>& attrs,
                              aclTensor* out, uint64_t* workspace_size, aclOpExecutor** executor) const;
};

// The entry of an op by its aclnn name, or null.
const OpEntry* find_op(const std::string& name);

// Every entry, in op kind order.
const std::vector<OpEntry>& all_ops();

}  // namespace nnplug::python
