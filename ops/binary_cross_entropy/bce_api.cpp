// The aclnn entry points of both binary cross-entropy ops.
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>

#include <new>

#include "bce_plan.h"

namespace nnplug {
namespace {

aclnnStatus first_phase(const BceCall& call, uint64_t* workspace_size, aclOpExecutor** executor) noexcept {
    try {
        RuntimeLease runtime(call.api);
        if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
        if (workspace_size == nullptr || executor == nullptr) {
            set_last_error("{}: {} is null", call.api, workspace_size == nullptr ? "workspaceSize" : "executor");
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        nnplug_op_desc desc;
        bool empty_self = false;
        if (const aclnnStatus status = plan_bce(call, device_traits(*runtime), desc, empty_self)) return status;
        return prepare_executor(*runtime, call.api, desc, empty_self, workspace_size, executor);
    } catch (const std::bad_alloc&) {
        set_last_error("{}: out of host memory", call.api);
        return ACLNN_ERR_INNER;
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", call.api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

aclnnStatus second_phase(const char* api, void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                         aclrtStream stream) noexcept {
    try {
        return run_executor(api, workspace, workspace_size, executor, stream);
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

constexpr const char* kForward = "aclnnBinaryCrossEntropy";
constexpr const char* kBackward = "aclnnBinaryCrossEntropyBackward";

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                    const aclTensor* weight, int64_t reduction,
                                                    aclTensor* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
    const nnplug::BceCall call{nnplug::kForward, NNPLUG_OP_BCE_FORWARD, nullptr, self, target, weight,
                               reduction, out};
    return nnplug::first_phase(call, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropy(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                    aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                            const aclTensor* target,
                                                            const aclTensor* weightOptional,
                                                            int64_t reduction, aclTensor* out,
                                                            uint64_t* workspaceSize,
                                                            aclOpExecutor** executor) {
    const nnplug::BceCall call{nnplug::kBackward, NNPLUG_OP_BCE_BACKWARD, gradOutput, self, target,
                               weightOptional, reduction, out};
    return nnplug::first_phase(call, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
