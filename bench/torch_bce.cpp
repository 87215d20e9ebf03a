#include "torch_bce.h"

#ifdef NNPLUG_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

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
        : case_(c), self_(as_tensor(host.self, false)), target_(as_tensor(host.target, false)),
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

}  // namespace

bool torch_available(std::string&) { return true; }
void torch_set_threads(int threads) { at::set_num_threads(threads); }

std::unique_ptr<TorchCase> make_torch_case(const BceCase& c, const HostOperands& host, std::string& why_not) {
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
