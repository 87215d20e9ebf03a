// One aclnn op run on host tensors (as torch lays them out), without the GIL: the two
// phases, a workspace, a stream of its own, and staging through device memory when the
// backend's device memory is not host memory.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "op_table.h"

namespace nnplug::python {

// A strided view over host memory: `data` already points at the view's first element
// (torch's data_ptr() includes the storage offset); shape and strides in elements.
struct HostTensor {
    uintptr_t data = 0;
    aclDataType dtype = ACL_DT_UNDEFINED;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
};

// A failing acl/aclnn call: its status and the runtime's message for it.
class AclFailure : public std::runtime_error {
public:
    AclFailure(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

// Throws AclFailure with aclGetRecentErrMsg() when `status` is not 0.
void check_status(int status, const char* call);

// Whether the active backend's device memory is host memory (then the ops read torch's
// memory in place); asked once per aclInit by a copy the backend refuses otherwise.
bool probe_device_memory_is_host();

// Runs `op` with `inputs` (std::nullopt for an absent optional operand) and its attributes
// into `out`. `stage` copies every operand through aclrtMalloc'd memory. Throws AclFailure.
void run_op(const OpEntry& op, const std::vector<std::optional<HostTensor>>& inputs,
            const std::vector<nnplug_attr_arg>& attrs, const HostTensor& out, bool stage);

}  // namespace nnplug::python
