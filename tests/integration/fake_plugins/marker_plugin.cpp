// A working backend whose constructor leaves a mark, the file $NNPLUG_FAKE_MARKER, so a
// test can tell whether the library was ever opened: a refused plugin must leave none.
#include <cstdio>
#include <cstdlib>

#include "fake_backend.h"

namespace {

__attribute__((constructor)) void leave_mark() {
    if (const char* marker = std::getenv("NNPLUG_FAKE_MARKER"))
        if (std::FILE* file = std::fopen(marker, "w")) std::fclose(file);
}

const nnplug_plugin kPlugin = fake::table("marker");

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
