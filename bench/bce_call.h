// One binary cross-entropy case on device memory, called the way a CANN program
// calls it: GetWorkspaceSize, run, synchronize. Either family: the loss on
// probabilities (aclnnBinaryCrossEntropy and its Backward) or the loss on logits
// (aclnnBinaryCrossEntropyWithLogits, its Backward and its TargetBackward). Shared by
// the comparison driver and the Google Benchmark suite.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nnplug::bench {

struct BceCase {
    bool backward = true;
    int64_t reduction = 0;  // 0 none, 1 mean, 2 sum
    aclDataType dtype = ACL_FLOAT;
    int64_t numel = 0;
    // The with-logits family: no weight; backward is the gradient w.r.t. self, or
    // w.r.t. target when target_grad is set.
    bool logits = false;
    bool target_grad = false;
    // With logits and above 0: self is [numel / classes, classes] and a posWeight of
    // [classes] broadcasts against it (numel must be a multiple of classes).
    int64_t classes = 0;
};

bool same_case(const BceCase& a, const BceCase& b);

std::string dtype_name(aclDataType dtype);
size_t dtype_bytes(aclDataType dtype);
// Bytes one call reads and writes: every input once (a 0-d gradOutput with a
// reduction, posWeight's [classes] once) and out once (one element for a reduced forward).
int64_t bytes_moved(const BceCase& c);

// Host copies of a case's operands in the case's dtype (raw bytes), random values
// in the op's domain (logits in [-6, 6]); gradOutput is one element when the case
// reduces; weight is empty with logits, pos_weight empty unless the case has classes.
struct HostOperands {
    std::vector<uint8_t> grad, self, target, weight, pos_weight, out;
};
HostOperands make_host_operands(const BceCase& c, uint32_t seed);

// Device tensors of one case (contiguous: 1-d, or [numel / classes, classes] with a
// posWeight; weight present without logits) plus a workspace that grows on demand.
// Needs an initialized runtime.
class DeviceCase {
public:
    DeviceCase(const BceCase& c, const HostOperands& host);
    ~DeviceCase();
    DeviceCase(const DeviceCase&) = delete;
    DeviceCase& operator=(const DeviceCase&) = delete;

    // The full two-phase call and a synchronize; ACL_SUCCESS or the failing status
    // (the message is in aclGetRecentErrMsg).
    int call();
    // The first out elements, decoded to float.
    std::vector<float> read_out(int64_t count) const;

private:
    BceCase case_;
    void* buffers_[6] = {};
    aclTensor* tensors_[6] = {};
    void* workspace_ = nullptr;
    uint64_t workspace_capacity_ = 0;
};

}  // namespace nnplug::bench
