// One aclnn op run on host tensors (as torch lays them out), without the GIL: the two
// phases, a workspace, a stream of its own, and staging through device memory when the
// backend's device memory is not host memory. Used by the generic call of nnplug._nnplug
// (run_op, by op name) and by the torch operators of nnplug._nnplug_torch (typed calls).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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

// What the package knows of the runtime between its init and finalize, shared by the
// extension modules through a capsule of nnplug._nnplug (kRuntimeStateCapsule).
struct RuntimeState {
    std::atomic<bool> initialized{false};
    // whether the ops can read torch's memory in place (decided at each init)
    std::atomic<bool> device_memory_is_host{true};
    // one more at each init: a stream made under an older runtime is gone with it
    std::atomic<uint64_t> generation{0};
};
inline constexpr const char* kRuntimeStateCapsule = "nnplug._nnplug._runtime_state";

// Throws AclFailure with aclGetRecentErrMsg() when `status` is not 0.
void check_status(int status, const char* call);

// Whether the active backend's device memory is host memory (then the ops read torch's
// memory in place); asked once per aclInit by a copy the backend refuses otherwise.
bool probe_device_memory_is_host();

// aclrtMalloc'd memory, freed on every path.
class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* data() const { return data_; }

private:
    void* data_ = nullptr;
};

// The aclTensor an op sees for one host tensor: over the host memory itself, or over a
// device copy of the reachable storage (same strides) that `copy_back` returns. The copy
// is made of outputs too: an op that writes nothing (an empty `self`) leaves them as they were.
class OperandTensor {
public:
    OperandTensor(const HostTensor& host, bool stage)
        : OperandTensor(host.data, host.dtype, host.shape.data(), host.strides.data(), host.shape.size(),
                        stage) {}
    // The same from a view's parts (shape and strides: `rank` elements each, read here only).
    OperandTensor(uintptr_t data, aclDataType dtype, const int64_t* shape, const int64_t* strides,
                  size_t rank, bool stage);
    aclTensor* get() const { return tensor_.get(); }
    void copy_back() const;

private:
    struct Destroy {
        void operator()(aclTensor* t) const { aclDestroyTensor(t); }
    };
    uintptr_t host_data_;
    size_t bytes_;
    DeviceBuffer device_;
    std::unique_ptr<aclTensor, Destroy> tensor_;
};

// A stream of the call's own, so that its synchronize reports its own errors only.
// Destroying it waits for its work, before the buffers declared ahead of it are freed.
class CallStream {
public:
    CallStream();
    ~CallStream();
    CallStream(const CallStream&) = delete;
    CallStream& operator=(const CallStream&) = delete;
    aclrtStream get() const { return stream_; }

private:
    aclrtStream stream_ = nullptr;
};

// The second phase of `name` on the executor its first phase returned with `first_status`,
// then a wait for the stream; an executor the run did not consume is destroyed. Throws
// AclFailure (the first phase's failure included).
void run_executor(const char* name, aclnnStatus first_status, aclOpExecutor* executor,
                  uint64_t workspace_size, RunFn run, aclrtStream stream);

// Runs `op` with `inputs` (std::nullopt for an absent optional operand) and its attributes
// into `out`. `stage` copies every operand through aclrtMalloc'd memory. Throws AclFailure.
void run_op(const OpEntry& op, const std::vector<std::optional<HostTensor>>& inputs,
            const std::vector<nnplug_attr_arg>& attrs, const HostTensor& out, bool stage);

}  // namespace nnplug::python
