// A plugin built for an ABI version this runtime does not speak.
#include <nnplug/plugin.h>

namespace {
const nnplug_plugin kOld = {NNPLUG_PLUGIN_ABI_VERSION + 41, 24, "oldabi", "from another era"};
}

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) { return &kOld; }
