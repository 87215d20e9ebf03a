// PyTorch's own kernels on the same case, through libtorch when the build found it:
// binary cross-entropy in float32 only (PyTorch 1.13 has no CPU float16/bfloat16
// kernel for it); the loss on logits in whichever dtype PyTorch's composite runs.
#pragma once

#include <memory>
#include <string>

#include "bce_call.h"

namespace nnplug::bench {

class TorchCase {
public:
    virtual ~TorchCase() = default;
    // binary_cross_entropy_backward_out / binary_cross_entropy_out into preallocated out;
    // binary_cross_entropy_with_logits, or autograd's gradient of it.
    virtual void call() = 0;
};

// Whether this build has libtorch; why not, when it has not.
bool torch_available(std::string& why_not);
// Sets PyTorch's intra-op thread count.
void torch_set_threads(int threads);
// A case on copies of the host operands; nullptr (with why_not) if PyTorch cannot run it.
std::unique_ptr<TorchCase> make_torch_case(const BceCase& c, const HostOperands& host, std::string& why_not);

}  // namespace nnplug::bench
