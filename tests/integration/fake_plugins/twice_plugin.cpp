// A plugin that lists one op twice: refused at load, whichever entry would win.
#include "fake_backend.h"

namespace {

const nnplug_op_i kAgain = [] {
    nnplug_op_i op = fake::kBackward;
    op.name = "aclnnBinaryCrossEntropyBackward (again)";
    return op;
}();
const nnplug_op_i* const kOps[] = {&fake::kBackward, &kAgain};

const nnplug_plugin kPlugin = [] {
    nnplug_plugin plugin = fake::table("twice");
    plugin.description = "lists aclnnBinaryCrossEntropyBackward twice";
    plugin.ops = kOps;
    plugin.op_count = 2;
    return plugin;
}();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
