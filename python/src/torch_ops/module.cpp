// nnplug._nnplug_torch: nnplug's losses as torch operators (torch.ops.nnplug.<loss>), each a
// C++ kernel with its autograd, so a call runs no Python. Importing the module registers
// them; it needs nnplug._nnplug imported first (its runtime state) and torch.
//
// The same kernels are bound here directly for nnplug.torch's functions: an operator's call
// from Python matches its arguments against the schema and boxes them (about 2 us, a sixth
// of a small loss's forward and backward), a pybind11 call converts them in place.
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <string>

#include "aten_call.h"
#include "block_cache.h"
#include "losses.h"

// The namespace's operators are defined in fragments, next to their kernels
// (elementwise_losses.cpp, class_losses.cpp).
TORCH_LIBRARY(nnplug, /*library=*/) {}

namespace py = pybind11;

namespace {

// A kernel's result, the GIL released while it runs; its failure raised as torch raises an
// operator's (TypeError, ValueError, nnplug.Error, RuntimeError).
template <class Body>
at::Tensor translated(Body&& body) {
    try {
        py::gil_scoped_release release;
        return body();
    } catch (const py::error_already_set&) {
        throw;
    } catch (...) {
        torch::translate_exception_to_python(std::current_exception());
        throw py::error_already_set();
    }
}

using Optional = c10::optional<at::Tensor>;

void bind_losses(py::module_& m) {
    using namespace nnplug::torch_ops;
    m.def("binary_cross_entropy",
          [](const at::Tensor& x, const at::Tensor& y, const Optional& w, const std::string& r) {
              return translated([&] { return binary_cross_entropy(x, y, w, r); });
          });
    m.def("binary_cross_entropy_with_logits", [](const at::Tensor& x, const at::Tensor& y, const Optional& w,
                                                 const Optional& p, const std::string& r) {
        return translated([&] { return binary_cross_entropy_with_logits(x, y, w, p, r); });
    });
    m.def("mse_loss", [](const at::Tensor& x, const at::Tensor& y, const std::string& r) {
        return translated([&] { return mse_loss(x, y, r); });
    });
    m.def("l1_loss", [](const at::Tensor& x, const at::Tensor& y, const std::string& r) {
        return translated([&] { return l1_loss(x, y, r); });
    });
    m.def("smooth_l1_loss", [](const at::Tensor& x, const at::Tensor& y, const std::string& r, double beta) {
        return translated([&] { return smooth_l1_loss(x, y, r, beta); });
    });
    m.def("huber_loss", [](const at::Tensor& x, const at::Tensor& y, const std::string& r, double delta) {
        return translated([&] { return huber_loss(x, y, r, delta); });
    });
    m.def("soft_margin_loss", [](const at::Tensor& x, const at::Tensor& y, const std::string& r) {
        return translated([&] { return soft_margin_loss(x, y, r); });
    });
    m.def("kl_div", [](const at::Tensor& x, const at::Tensor& y, const std::string& r, bool log_target) {
        return translated([&] { return kl_div(x, y, r, log_target); });
    });
    m.def("nll_loss", [](const at::Tensor& x, const at::Tensor& t, const Optional& w, const std::string& r,
                         int64_t ignore_index) {
        return translated([&] { return nll_loss(x, t, w, r, ignore_index); });
    });
    m.def("cross_entropy", [](const at::Tensor& x, const at::Tensor& t, const Optional& w,
                              const std::string& r, int64_t ignore_index, double smoothing) {
        return translated([&] { return cross_entropy(x, t, w, r, ignore_index, smoothing); });
    });
}

}  // namespace

PYBIND11_MODULE(_nnplug_torch, m) {
    m.doc() = "nnplug's losses as torch operators, torch.ops.nnplug.*, and their kernels bound directly";
    nnplug::torch_ops::bind_runtime_state();
    m.def("cached_bytes", &nnplug::torch_ops::cached_bytes,
          "bytes of freed output blocks held for reuse (at most 1 GiB)");
    bind_losses(m);
}
