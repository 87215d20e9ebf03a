#include "op_table.h"

#include <cstring>

#include "aclnnop/aclnn_binary_cross_entropy.h"
#include "aclnnop/aclnn_binary_cross_entropy_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"

namespace nnplug::python {
namespace {

// A new op is one entry: its name, input count and a lambda that spreads the inputs.
const OpEntry kOps[] = {
    {"aclnnBinaryCrossEntropy", 3,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnBinaryCrossEntropyGetWorkspaceSize(in[0], in[1], in[2], reduction, out, size, ex);
     },
     aclnnBinaryCrossEntropy},
    {"aclnnBinaryCrossEntropyBackward", 4,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(in[0], in[1], in[2], in[3], reduction, out,
                                                                size, ex);
     },
     aclnnBinaryCrossEntropyBackward},
    {"aclnnBinaryCrossEntropyWithLogits", 4,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(in[0], in[1], in[2], in[3], reduction, out,
                                                                  size, ex);
     },
     aclnnBinaryCrossEntropyWithLogits},
    {"aclnnBinaryCrossEntropyWithLogitsBackward", 5,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(in[0], in[1], in[2], in[3], in[4],
                                                                          reduction, out, size, ex);
     },
     aclnnBinaryCrossEntropyWithLogitsBackward},
    {"aclnnBinaryCrossEntropyWithLogitsTargetBackward", 5,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
             in[0], in[1], in[2], in[3], in[4], reduction, out, size, ex);
     },
     aclnnBinaryCrossEntropyWithLogitsTargetBackward},
    {"aclnnMseLoss", 2,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnMseLossGetWorkspaceSize(in[0], in[1], reduction, out, size, ex);
     },
     aclnnMseLoss},
    {"aclnnMseLossBackward", 3,
     [](const aclTensor* const* in, int64_t reduction, aclTensor* out, uint64_t* size, aclOpExecutor** ex) {
         return aclnnMseLossBackwardGetWorkspaceSize(in[0], in[1], in[2], reduction, out, size, ex);
     },
     aclnnMseLossBackward},
};

}  // namespace

const OpEntry* find_op(const char* name) {
    for (const OpEntry& entry : kOps) {
        if (std::strcmp(entry.name, name) == 0) return &entry;
    }
    return nullptr;
}

const OpEntry* all_ops(int* count) {
    *count = static_cast<int>(sizeof(kOps) / sizeof(kOps[0]));
    return kOps;
}

}  // namespace nnplug::python
