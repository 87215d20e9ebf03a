#include "torch_cross_entropy.h"

#include "torch_bce.h"

#ifdef NNPLUG_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstring>
#endif

namespace nnplug::bench {

#ifdef NNPLUG_BENCH_WITH_TORCH
namespace {

class LibtorchCrossEntropy : public TorchCrossEntropy {
public:
    LibtorchCrossEntropy(const std::vector<float>& logits, int64_t rows, int64_t classes, at::ScalarType type,
                         const std::vector<int64_t>& target) {
        auto values = at::empty({rows, classes}, at::kFloat);
        std::memcpy(values.data_ptr<float>(), logits.data(), logits.size() * sizeof(float));
        input_ = values.to(type);
        input_.requires_grad_(true);
        target_ = at::empty({rows}, at::kLong);
        std::memcpy(target_.data_ptr<int64_t>(), target.data(), target.size() * sizeof(int64_t));
    }
    void step() override {
        const at::Tensor loss = at::cross_entropy_loss(input_, target_);
        gradient_ = torch::autograd::grad({loss}, {input_})[0];
    }

private:
    at::Tensor input_, target_, gradient_;
};

}  // namespace

std::unique_ptr<TorchCrossEntropy> make_torch_cross_entropy(const std::vector<float>& logits, int64_t rows,
                                                            int64_t classes, const std::string& dtype,
                                                            const std::vector<int64_t>& target,
                                                            std::string& why_not) {
    try {
        const auto type = dtype == "bfloat16" ? at::kBFloat16 : dtype == "float16" ? at::kHalf : at::kFloat;
        auto torch_case = std::make_unique<LibtorchCrossEntropy>(logits, rows, classes, type, target);
        torch_case->step();
        return torch_case;
    } catch (const c10::Error& error) {
        const std::string message = error.what_without_backtrace();
        why_not = "PyTorch 1.13: " + message.substr(0, message.find('\n'));
        return nullptr;
    }
}
#else
std::unique_ptr<TorchCrossEntropy> make_torch_cross_entropy(const std::vector<float>&, int64_t, int64_t,
                                                            const std::string&, const std::vector<int64_t>&,
                                                            std::string& why_not) {
    torch_available(why_not);
    return nullptr;
}
#endif

}  // namespace nnplug::bench
