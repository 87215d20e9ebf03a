// A plugin built for ABI version 1: its table starts with the version and size, as
// every version's does, and the rest is version 1's layout, which this runtime must
// never read.
#include <cstddef>
#include <cstdint>

#define NNPLUG_EXPORT __attribute__((visibility("default")))

namespace {
struct VersionOneTable {
    uint32_t abi_version;
    uint32_t struct_size;
    const char* name;
    const char* description;
};
const VersionOneTable kVersionOne = {1, 168, "oldabi", "built for ABI version 1"};
}  // namespace

extern "C" NNPLUG_EXPORT const void* nnplug_plugin_entry(void) {
    return &kVersionOne;
}
