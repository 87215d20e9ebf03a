// nnplug._nnplug_torch: nnplug's losses as torch operators (torch.ops.nnplug.<loss>), each a
// C++ kernel with its autograd, so a call runs no Python. Importing the module registers
// them; it needs nnplug._nnplug imported first (its runtime state) and torch.
#include <pybind11/pybind11.h>
#include <torch/library.h>

#include "aten_call.h"
#include "block_cache.h"

// The namespace's operators are defined in fragments, next to their kernels
// (elementwise_losses.cpp, class_losses.cpp).
TORCH_LIBRARY(nnplug, /*library=*/) {}

PYBIND11_MODULE(_nnplug_torch, m) {
    m.doc() = "nnplug's losses as torch operators, torch.ops.nnplug.*";
    nnplug::torch_ops::bind_runtime_state();
    m.def("cached_bytes", &nnplug::torch_ops::cached_bytes,
          "bytes of freed output blocks held for reuse (at most 1 GiB)");
}
