// aclnnKlDiv, aclnnKlDivBackward and aclnnKlDivTargetBackward against the memory bandwidth
// (loss_compare.h).
#include <aclnnop/aclnn_kl_div.h>
#include <aclnnop/aclnn_kl_div_backward.h>
#include <aclnnop/aclnn_kl_div_target_backward.h>

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
                return aclnnKlDivGetWorkspaceSize(t.self, t.target, reduction, false, t.out, size, executor);
            },
            aclnnKlDiv};
}

}  // namespace

int main(int argc, char** argv) {
    // The self gradient reads only target (-t·g); the target gradient both.
    const LossCase self_gradient{"aclnnKlDivBackward none",
                                 true,
                                 1,
                                 true,
                                 [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                     return aclnnKlDivBackwardGetWorkspaceSize(t.grad, t.self, t.target, 0,
                                                                               false, t.out, size, executor);
                                 },
                                 aclnnKlDivBackward};
    const LossCase target_gradient{"aclnnKlDivTargetBackward none",
                                   true,
                                   2,
                                   true,
                                   [](const LossTensors& t, uint64_t* size, aclOpExecutor** executor) {
                                       return aclnnKlDivTargetBackwardGetWorkspaceSize(
                                           t.grad, t.self, t.target, 0, false, t.out, size, executor);
                                   },
                                   aclnnKlDivTargetBackward};
    return nnplug::bench::compare_losses(
        argc, argv, "nnplug_compare_kl_div",
        "aclnnKlDiv and its gradients against the memory bandwidth (triad), side by side",
        {16 << 20, 64 << 20},
        {loss(0, "aclnnKlDiv none"), loss(3, "aclnnKlDiv batchmean"), self_gradient, target_gradient});
}
