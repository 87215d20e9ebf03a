// The two-phase aclnn protocol, once for every op: the first phase checks a call
// against the op's schema, asks the backend to prepare it and hands out an executor;
// the second phase runs an executor. An op's entry points are thin wrappers of these.
#pragma once

#include <aclnn/acl_meta.h>

#include <initializer_list>

#include "op_schema.h"

namespace nnplug {

// aclnnXxxGetWorkspaceSize: tensors and attrs in schema order (as many as it has of each).
aclnnStatus first_phase(const OpSchema& schema, const aclTensor* const* tensors, size_t tensor_count,
                        const AttrValue* attrs, size_t attr_count, uint64_t* workspace_size,
                        aclOpExecutor** executor) noexcept;

inline aclnnStatus first_phase(const OpSchema& schema, std::initializer_list<const aclTensor*> tensors,
                               std::initializer_list<AttrValue> attrs, uint64_t* workspace_size,
                               aclOpExecutor** executor) noexcept {
    return first_phase(schema, tensors.begin(), tensors.size(), attrs.begin(), attrs.size(), workspace_size,
                       executor);
}

// aclnnXxx: runs (or enqueues) an executor made by schema's first phase.
aclnnStatus second_phase(const OpSchema& schema, void* workspace, uint64_t workspace_size,
                         aclOpExecutor* executor, aclrtStream stream) noexcept;

}  // namespace nnplug
