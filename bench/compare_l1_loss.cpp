// aclnnL1Loss and aclnnL1LossBackward against the memory bandwidth (loss_compare.h).
#include <aclnnop/aclnn_l1_loss.h>
#include <aclnnop/aclnn_l1_loss_backward.h>

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
                return aclnnL1LossGetWorkspaceSize(t.self, t.target, reduction, t.out, size, executor);
            },
            aclnnL1Loss};
}

}  // namespace

int main(int argc, char** argv) {
    const LossCase gradient{"aclnnL1LossBackward none",
                            true,
                            2,
                            true,
                            [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                return aclnnL1LossBackwardGetWorkspaceSize(t.grad, t.self, t.target, 0, t.out,
                                                                           size, executor);
                            },
                            aclnnL1LossBackward};
    return nnplug::bench::compare_losses(
        argc, argv, "nnplug_compare_l1_loss",
        "aclnnL1Loss and its backward against the memory bandwidth (triad), side by side",
        {16 << 20, 64 << 20}, {loss(0, "aclnnL1Loss none"), loss(1, "aclnnL1Loss mean"), gradient});
}
