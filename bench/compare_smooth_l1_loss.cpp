// aclnnSmoothL1Loss and aclnnSmoothL1LossBackward against the memory bandwidth
// (loss_compare.h).
#include <aclnnop/aclnn_smooth_l1_loss.h>
#include <aclnnop/aclnn_smooth_l1_loss_backward.h>

#include "loss_compare.h"

using nnplug::bench::LossCase;
using nnplug::bench::LossTensors;

namespace {

// The default beta: both branches are computed for every element whatever the data.
constexpr float kBeta = 1.0f;

LossCase loss(int64_t reduction, const char* name) {
    return {name,
            reduction == 0,
            2,
            false,
            [reduction](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                return aclnnSmoothL1LossGetWorkspaceSize(t.self, t.target, reduction, kBeta, t.out, size,
                                                         executor);
            },
            aclnnSmoothL1Loss};
}

}  // namespace

int main(int argc, char** argv) {
    const LossCase gradient{"aclnnSmoothL1LossBackward none",
                            true,
                            2,
                            true,
                            [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                return aclnnSmoothL1LossBackwardGetWorkspaceSize(
                                    t.grad, t.self, t.target, 0, kBeta, t.out, size, executor);
                            },
                            aclnnSmoothL1LossBackward};
    return nnplug::bench::compare_losses(
        argc, argv, "nnplug_compare_smooth_l1_loss",
        "aclnnSmoothL1Loss and its backward against the memory bandwidth (triad), side by side",
        {16 << 20, 64 << 20},
        {loss(0, "aclnnSmoothL1Loss none"), loss(1, "aclnnSmoothL1Loss mean"), gradient});
}
