// aclnnMseLoss and aclnnMseLossBackward against the memory bandwidth (loss_compare.h).
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>

#include "loss_compare.h"

using nnplug::bench::LossCase;
using nnplug::bench::LossTensors;

namespace {

LossCase loss(int64_t reduction, const char* name) {
    return {name,
            reduction == 0,
            2,
            false,
            [reduction](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                return aclnnMseLossGetWorkspaceSize(t.self, t.target, reduction, t.out, size, executor);
            },
            aclnnMseLoss};
}

}  // namespace

int main(int argc, char** argv) {
    const LossCase gradient{"aclnnMseLossBackward none",
                            true,
                            2,
                            true,
                            [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                return aclnnMseLossBackwardGetWorkspaceSize(t.grad, t.self, t.target, 0,
                                                                            t.out, size, executor);
                            },
                            aclnnMseLossBackward};
    return nnplug::bench::compare_losses(
        argc, argv, "nnplug_compare_mse_loss",
        "aclnnMseLoss and its backward against the memory bandwidth (triad), side by side",
        {1 << 20, 16 << 20}, {loss(0, "aclnnMseLoss none"), loss(1, "aclnnMseLoss mean"), gradient});
}
