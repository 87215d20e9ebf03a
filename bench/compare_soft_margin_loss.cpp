// aclnnSoftMarginLoss and aclnnSoftMarginLossBackward against the memory bandwidth (loss_compare.h).
#include <aclnnop/aclnn_soft_margin_loss.h>
#include <aclnnop/aclnn_soft_margin_loss_backward.h>

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
                return aclnnSoftMarginLossGetWorkspaceSize(t.self, t.target, reduction, t.out, size,
                                                           executor);
            },
            aclnnSoftMarginLoss};
}

}  // namespace

int main(int argc, char** argv) {
    const LossCase gradient{"aclnnSoftMarginLossBackward none",
                            true,
                            2,
                            true,
                            [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                return aclnnSoftMarginLossBackwardGetWorkspaceSize(t.grad, t.self, t.target,
                                                                                   0, t.out, size, executor);
                            },
                            aclnnSoftMarginLossBackward};
    return nnplug::bench::compare_losses(
        argc, argv, "nnplug_compare_soft_margin_loss",
        "aclnnSoftMarginLoss and its backward against the memory bandwidth (triad), side by side",
        {16 << 20, 64 << 20},
        {loss(0, "aclnnSoftMarginLoss none"), loss(1, "aclnnSoftMarginLoss mean"), gradient});
}
