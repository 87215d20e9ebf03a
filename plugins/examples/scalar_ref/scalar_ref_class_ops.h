// scalar_ref's ops with a class axis (NLLLoss, NLLLoss2d, their backwards, CrossEntropyLoss
// and its gradient): plain scalar loops over the rows of nnplug_op_desc.class_axis, in
// scalar_ref_class_ops.cpp. Internal to the plugin; only the SDK headers are used.
#pragma once

#include <nnplug/plugin.h>

namespace scalar_ref {

// Runs one of the six class-axis ops. Every target is checked first: a class index outside
// [0, C) that is not ignoreIndex refuses the call with NNPLUG_ERR_INVALID_ARGUMENT and a
// message for last_error(), and nothing is written.
nnplug_status run_class_op(const nnplug_op_desc& desc);

}  // namespace scalar_ref
