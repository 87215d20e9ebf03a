// The kernels of nnplug's torch operators, each a loss through autograd with torch's
// semantics: registered as torch.ops.nnplug.<name> (elementwise_losses.cpp,
// class_losses.cpp) and bound directly for nnplug.torch's functions (module.cpp), which
// skips the operator's boxed call from Python.
#pragma once

#include <ATen/ATen.h>

namespace nnplug::torch_ops {

at::Tensor binary_cross_entropy(const at::Tensor& input, const at::Tensor& target,
                                const c10::optional<at::Tensor>& weight, c10::string_view reduction);
at::Tensor binary_cross_entropy_with_logits(const at::Tensor& input, const at::Tensor& target,
                                            const c10::optional<at::Tensor>& weight,
                                            const c10::optional<at::Tensor>& pos_weight,
                                            c10::string_view reduction);
at::Tensor mse_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction);
at::Tensor l1_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction);
at::Tensor smooth_l1_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                          double beta);
at::Tensor huber_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                      double delta);
at::Tensor soft_margin_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction);
at::Tensor kl_div(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                  bool log_target);
at::Tensor nll_loss(const at::Tensor& input, const at::Tensor& target,
                    const c10::optional<at::Tensor>& weight, c10::string_view reduction,
                    int64_t ignore_index);
at::Tensor cross_entropy(const at::Tensor& input, const at::Tensor& target,
                         const c10::optional<at::Tensor>& weight, c10::string_view reduction,
                         int64_t ignore_index, double label_smoothing);

}  // namespace nnplug::torch_ops
