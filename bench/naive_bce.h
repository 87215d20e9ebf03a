// The binary cross-entropy written as a plain single-threaded loop over the raw
// buffers, element by element with the scalar SDK helpers (binary_cross_entropy_math.h, and
// binary_cross_entropy_with_logits_math.h for the loss on logits): the baseline a user would write
// without a library.
#pragma once

#include "bce_call.h"

namespace nnplug::bench {

// Computes the case on host operands (out is written; a reduced forward returns the loss).
double naive_bce(const BceCase& c, HostOperands& host);

}  // namespace nnplug::bench
