#include "torch_bce.h"

#ifdef NNPLUG_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstring>
#endif

namespace nnplug::bench {

#ifdef NNPLUG_BENCH_WITH_TORCH
namespace {

at::Tensor as_tensor(const std::vector<uint8_t>& bytes, bool scalar) {
    const int64_t count = static_cast<int64_t>(bytes.size() / sizeof(float));
    auto tensor = at::empty(scalar ? at::IntArrayRef{} : at::IntArrayRef{count}, at::kFloat);
    std::memcpy(tensor.data_ptr<float>(), bytes.data(), bytes.size());
    return tensor;
}

class LibtorchCase : public TorchCase {
public:
    LibtorchCase(const BceCase& c, const HostOperands& host)
        : case_(c),
          self_(as_tensor(host.self, false)),
          target_(as_tensor(host.target, false)),
          weight_(as_tensor(host.weight, false)),
          out_(as_tensor(host.out, !c.backward && c.reduction != 0)) {
        if (c.backward) grad_ = as_tensor(host.grad, c.reduction != 0);
    }
    void call() override {
        if (case_.backward)
            at::binary_cross_entropy_backward_out(out_, grad_, self_, target_, weight_, case_.reduction);
        else if (case_.reduction == 0)
            at::binary_cross_entropy_out(out_, self_, target_, weight_, case_.reduction);
        else  // PyTorch's _out form refuses a 0-d out for a reduction; this allocates one scalar
            out_ = at::binary_cross_entropy(self_, target_, weight_, case_.reduction);
    }

private:
    BceCase case_;
    at::Tensor grad_, self_, target_, weight_, out_;
};

at::Tensor as_tensor(const std::vector<uint8_t>& bytes, aclDataType dtype, at::IntArrayRef shape) {
    const auto type = dtype == ACL_FLOAT ? at::kFloat : dtype == ACL_FLOAT16 ? at::kHalf : at::kBFloat16;
    auto tensor = at::empty(shape, type);
    std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
    return tensor;
}

// The loss on logits in the case's dtype: the forward is PyTorch's composite
// binary_cross_entropy_with_logits (it allocates its result); PyTorch 1.13 has no ATen
// op for either gradient, so a backward is autograd's node of that forward, run again
// on the retained graph: only the gradient is timed, not the forward that built it.
class LibtorchLogitsCase : public TorchCase {
public:
    LibtorchLogitsCase(const BceCase& c, const HostOperands& host) : case_(c) {
        const std::vector<int64_t> shape = c.classes > 0
                                               ? std::vector<int64_t>{c.numel / c.classes, c.classes}
                                               : std::vector<int64_t>{c.numel};
        self_ = as_tensor(host.self, c.dtype, shape);
        target_ = as_tensor(host.target, c.dtype, shape);
        if (c.classes > 0) pos_weight_ = as_tensor(host.pos_weight, c.dtype, {c.classes});
        if (!c.backward) return;
        grad_ = as_tensor(host.grad, c.dtype, c.reduction == 0 ? at::IntArrayRef(shape) : at::IntArrayRef{});
        input_ = c.target_grad ? target_ : self_;
        input_.requires_grad_(true);
        loss_ = at::binary_cross_entropy_with_logits(self_, target_, c10::nullopt, pos_weight_, c.reduction);
    }
    void call() override {
        if (case_.backward)
            out_ = torch::autograd::grad({loss_}, {input_}, {grad_}, /*retain_graph=*/true)[0];
        else
            out_ = at::binary_cross_entropy_with_logits(self_, target_, c10::nullopt, pos_weight_,
                                                        case_.reduction);
    }

private:
    BceCase case_;
    at::Tensor grad_, self_, target_, input_, loss_, out_;
    c10::optional<at::Tensor> pos_weight_;
};

}  // namespace

bool torch_available(std::string&) {
    return true;
}
void torch_set_threads(int threads) {
    at::set_num_threads(threads);
}

std::unique_ptr<TorchCase> make_torch_case(const BceCase& c, const HostOperands& host, std::string& why_not) {
    if (c.logits) {  // composite ops: whether 16-bit runs is known by trying
        try {
            auto torch_case = std::make_unique<LibtorchLogitsCase>(c, host);
            torch_case->call();
            return torch_case;
        } catch (const c10::Error& error) {
            const std::string message = error.what_without_backtrace();
            why_not = "PyTorch 1.13: " + message.substr(0, message.find('\n'));
            return nullptr;
        }
    }
    if (c.dtype != ACL_FLOAT) {
        why_not = "PyTorch 1.13 has no CPU " + dtype_name(c.dtype) + " kernel";
        return nullptr;
    }
    return std::make_unique<LibtorchCase>(c, host);
}
#else
bool torch_available(std::string& why_not) {
    why_not = "built without libtorch (Debian's libtorch-dev was not found)";
    return false;
}
void torch_set_threads(int) {}
std::unique_ptr<TorchCase> make_torch_case(const BceCase&, const HostOperands&, std::string& why_not) {
    torch_available(why_not);
    return nullptr;
}
#endif

}  // namespace nnplug::bench
