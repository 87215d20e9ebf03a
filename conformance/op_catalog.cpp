#include "op_catalog.h"

#include <stdexcept>

namespace nnplug::conformance {

const std::vector<OpUnderTest>& op_catalog() {
    static const std::vector<OpUnderTest> ops = [] {
        std::vector<OpUnderTest> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "conformance_op_sources.inc"
#undef NNPLUG_OP_SOURCE
        return all;
    }();
    return ops;
}

const OpUnderTest& op_named(const std::string& name) {
    for (const OpUnderTest& op : op_catalog())
        if (op.name == name) return op;
    throw std::out_of_range("no op called '" + name + "' in the test catalog");
}

aclnnStatus run_op(const OpUnderTest& op, const std::vector<const aclTensor*>& tensors,
                   const std::vector<int64_t>& attrs, aclrtStream stream) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = op.first_phase(tensors, attrs, &workspace_size, &executor);
    if (first != ACLNN_SUCCESS) return first;
    void* workspace = nullptr;
    if (workspace_size > 0 &&
        aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(executor);
        return ACLNN_ERR_INNER;
    }
    aclnnStatus status = op.second_phase(workspace, workspace_size, executor, stream);
    if (status == ACLNN_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS)
        status = ACLNN_ERR_RUNTIME_ERROR;
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

}  // namespace nnplug::conformance
