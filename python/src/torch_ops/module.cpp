// nnplug._nnplug_torch: nnplug's losses as torch operators (torch.ops.nnplug.<loss>), each a
// C++ kernel with its autograd, so a call runs no Python. Importing the module registers
// them; it needs nnplug._nnplug imported first (its runtime state) and torch.
#include <pybind11/pybind11.h>
#include <torch/library.h>

#include "aten_call.h"

// The namespace's operators are defined in fragments, next to their kernels
// (elementwise_losses.cpp, class_losses.cpp).
TORCH_LIBRARY(nnplug, /*library=*/) {}

PYBIND11_MODULE(_nnplug_torch, m) {
    m.doc() = "nnplug's losses as torch operators, torch.ops.nnplug.*";
    nnplug::torch_ops::bind_runtime_state();
}
