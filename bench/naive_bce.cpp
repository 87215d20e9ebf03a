#include "naive_bce.h"

#include <nnplug/dtype_convert.h>
#include <nnplug/ops/binary_cross_entropy_math.h>
#include <nnplug/ops/binary_cross_entropy_with_logits_math.h>

namespace nnplug::bench {
namespace {

// The loss on logits: no weight, posWeight [classes] along the last dimension when the case has one.
double naive_with_logits(const BceCase& c, int32_t dtype, HostOperands& host) {
    const float scale = c.reduction == 1 ? bce_mean_scale(c.numel) : 1.0f;
    const bool pos = c.classes > 0;
    double sum = 0;
    for (int64_t i = 0, column = 0; i < c.numel;
         ++i, column = pos && column + 1 == c.classes ? 0 : column + 1) {
        const float self = load_as_f32(host.self.data(), dtype, i);
        const float target = load_as_f32(host.target.data(), dtype, i);
        const float pos_weight = pos ? load_as_f32(host.pos_weight.data(), dtype, column) : 1.0f;
        if (c.backward) {
            const float grad = load_as_f32(host.grad.data(), dtype, c.reduction == 0 ? i : 0);
            const float value =
                c.target_grad ? pos ? bce_with_logits_target_backward_pos(grad, self, 1.0f, pos_weight, scale)
                                    : bce_with_logits_target_backward(grad, self, 1.0f, scale)
                : pos ? bce_with_logits_backward_pos(grad, self, target, 1.0f, pos_weight, scale)
                              : bce_with_logits_backward(grad, self, target, 1.0f, scale);
            store_from_f32(host.out.data(), dtype, i, value);
            continue;
        }
        const float loss = pos ? bce_with_logits_forward_pos(self, target, 1.0f, pos_weight)
                               : bce_with_logits_forward(self, target, 1.0f);
        if (c.reduction == 0)
            store_from_f32(host.out.data(), dtype, i, loss);
        else
            sum += loss;
    }
    if (!c.backward && c.reduction != 0) {
        const double loss = c.reduction == 1 ? sum / static_cast<double>(c.numel) : sum;
        store_from_f32(host.out.data(), dtype, 0, static_cast<float>(loss));
        return loss;
    }
    return 0;
}

}  // namespace

double naive_bce(const BceCase& c, HostOperands& host) {
    const int32_t dtype = c.dtype == ACL_FLOAT     ? NNPLUG_DTYPE_F32
                          : c.dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16
                                                   : NNPLUG_DTYPE_BF16;
    if (c.logits) return naive_with_logits(c, dtype, host);
    const float scale = c.reduction == 1 ? bce_mean_scale(c.numel) : 1.0f;
    double sum = 0;
    for (int64_t i = 0; i < c.numel; ++i) {
        const float self = load_as_f32(host.self.data(), dtype, i);
        const float target = load_as_f32(host.target.data(), dtype, i);
        const float weight = load_as_f32(host.weight.data(), dtype, i);
        if (c.backward) {
            const float grad = load_as_f32(host.grad.data(), dtype, c.reduction == 0 ? i : 0);
            store_from_f32(host.out.data(), dtype, i, bce_backward(grad, weight, self, target, scale));
        } else if (c.reduction == 0) {
            store_from_f32(host.out.data(), dtype, i, bce_forward(weight, self, target));
        } else {
            sum += bce_forward(weight, self, target);
        }
    }
    if (!c.backward && c.reduction != 0) {
        const double loss = c.reduction == 1 ? sum / static_cast<double>(c.numel) : sum;
        store_from_f32(host.out.data(), dtype, 0, static_cast<float>(loss));
        return loss;
    }
    return 0;
}

}  // namespace nnplug::bench
