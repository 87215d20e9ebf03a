// PyTorch's cross-entropy on the same data, through libtorch when the build found it:
// torch.nn.functional.cross_entropy's forward and autograd's backward, as a training step
// runs them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnplug::bench {

class TorchCrossEntropy {
public:
    virtual ~TorchCrossEntropy() = default;
    // The forward (mean) and the gradient with respect to the logits.
    virtual void step() = 0;
};

// logits (rows, classes) as float32 values, the dtype's name ("float32", "bfloat16"), class
// indices; nullptr (with why_not) when PyTorch cannot run it.
std::unique_ptr<TorchCrossEntropy> make_torch_cross_entropy(const std::vector<float>& logits, int64_t rows,
                                                            int64_t classes, const std::string& dtype,
                                                            const std::vector<int64_t>& target,
                                                            std::string& why_not);

}  // namespace nnplug::bench
