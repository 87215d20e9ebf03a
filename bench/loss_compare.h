// One side-by-side driver for the loss families of elementwise ops (compare_<family>.cpp):
// in one process, for each size and dtype, a STREAM triad over the same element count on the
// same threads and each of the family's op calls on device memory, interleaved, best of
// several repetitions; prints GB/s and the ratio nnplug/triad (bytes counted as the BCE
// comparison counts them: each input read once, out written once, one element for a reduced
// loss). Never asserts on time. A family lists its calls as LossCases.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nnplug::bench {

// The device tensors of one call: self and target of n elements, a one-element incoming
// gradient, and out (n elements, or one for a reduced loss).
struct LossTensors {
    const aclTensor* grad;
    const aclTensor* self;
    const aclTensor* target;
    aclTensor* out;
};

using LossFirstPhase =
    std::function<aclnnStatus(const LossTensors&, uint64_t* size, aclOpExecutor** executor)>;
using LossSecondPhase = aclnnStatus (*)(void* workspace, uint64_t size, aclOpExecutor* executor,
                                        aclrtStream stream);

// One row of the comparison: an op with its attributes.
struct LossCase {
    std::string name;     // as printed, e.g. "aclnnL1Loss mean"
    bool unreduced;       // out has n elements (an unreduced loss, a gradient), else one
    int64_t arrays_read;  // n-element inputs the op reads
    bool reads_gradient;  // and the one-element incoming gradient
    LossFirstPhase first;
    LossSecondPhase second;
};

// The driver's main: options --threads, --reps, --sizes (default `sizes`); returns the exit
// status. `program` names the binary in a message about an exception that escaped.
int compare_losses(int argc, char** argv, const std::string& program, const std::string& title,
                   const std::vector<int64_t>& sizes, const std::vector<LossCase>& cases);

}  // namespace nnplug::bench
