#include "op_call.h"

#include <memory>
#include <string>

namespace nnplug::python {

void check_status(int status, const char* call) {
    if (status == 0) return;
    const char* message = aclGetRecentErrMsg();
    std::string text = (message != nullptr && *message != '\0') ? message : call;
    throw AclFailure(status, text + " (status " + std::to_string(status) + ")");
}

namespace {

// Elements from the first element of the view to one past its last: the storage an
// aclTensor over the view must cover (0 for an empty view).
int64_t reachable_elements(const int64_t* shape, const int64_t* strides, size_t rank) {
    int64_t last = 0;
    for (size_t i = 0; i < rank; ++i) {
        if (shape[i] == 0) return 0;
        last += (shape[i] - 1) * strides[i];
    }
    return last + 1;
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) {
    if (bytes != 0) check_status(aclrtMalloc(&data_, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
}

DeviceBuffer::~DeviceBuffer() {
    if (data_ != nullptr) aclrtFree(data_);
}

OperandTensor::OperandTensor(uintptr_t data, aclDataType dtype, const int64_t* shape, const int64_t* strides,
                             size_t rank, bool stage)
    : host_data_(data),
      bytes_(static_cast<size_t>(reachable_elements(shape, strides, rank)) * aclDataTypeSize(dtype)),
      device_(stage ? bytes_ : 0) {
    void* address = reinterpret_cast<void*>(data);
    if (stage) {
        address = device_.data();
        if (bytes_ != 0) {
            check_status(aclrtMemcpy(address, bytes_, reinterpret_cast<void*>(data), bytes_,
                                     ACL_MEMCPY_HOST_TO_DEVICE),
                         "aclrtMemcpy");
        }
    }
    const int64_t storage = reachable_elements(shape, strides, rank);
    tensor_.reset(aclCreateTensor(shape, rank, dtype, strides, 0, ACL_FORMAT_ND, &storage, 1, address));
    if (!tensor_) check_status(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor");
}

void OperandTensor::copy_back() const {
    if (device_.data() == nullptr) return;
    check_status(aclrtMemcpy(reinterpret_cast<void*>(host_data_), bytes_, device_.data(), bytes_,
                             ACL_MEMCPY_DEVICE_TO_HOST),
                 "aclrtMemcpy");
}

CallStream::CallStream() {
    check_status(aclrtCreateStream(&stream_), "aclrtCreateStream");
}

CallStream::~CallStream() {
    aclrtDestroyStream(stream_);
}

void run_executor(const char* name, aclnnStatus first_status, aclOpExecutor* executor,
                  uint64_t workspace_size, RunFn run, aclrtStream stream) {
    check_status(first_status, name);
    std::unique_ptr<DeviceBuffer> workspace;
    aclnnStatus status = ACLNN_SUCCESS;
    try {
        workspace = std::make_unique<DeviceBuffer>(workspace_size);
        status = run(workspace->data(), workspace_size, executor, stream);
    } catch (const AclFailure&) {
        aclDestroyAclOpExecutor(executor);
        throw;
    }
    if (status != ACLNN_SUCCESS) {
        const std::string message = aclGetRecentErrMsg();
        aclDestroyAclOpExecutor(executor);  // succeeds and does nothing for a consumed one
        throw AclFailure(status, message + " (status " + std::to_string(status) + ")");
    }
    check_status(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
}

bool probe_device_memory_is_host() {
    void* device = nullptr;
    check_status(aclrtMalloc(&device, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    unsigned char host[64] = {};
    const aclError copied = aclrtMemcpy(host, sizeof host, device, sizeof host, ACL_MEMCPY_HOST_TO_HOST);
    aclrtFree(device);
    return copied == ACL_SUCCESS;
}

void run_op(const OpEntry& op, const std::vector<std::optional<HostTensor>>& inputs,
            const std::vector<nnplug_attr_arg>& attrs, const HostTensor& out, bool stage) {
    std::vector<std::unique_ptr<OperandTensor>> operands;
    std::vector<const aclTensor*> handles;
    for (const auto& input : inputs) {
        if (input) operands.push_back(std::make_unique<OperandTensor>(*input, stage));
        handles.push_back(input ? operands.back()->get() : nullptr);
    }
    OperandTensor result(out, stage);
    CallStream stream;
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        op.get_workspace(handles.data(), attrs, result.get(), &workspace_size, &executor);
    run_executor(op.name.c_str(), first, executor, workspace_size, op.run, stream.get());
    result.copy_back();
}

}  // namespace nnplug::python
