// A working backend whose constructor leaves a mark, the file $NNPLUG_FAKE_MARKER, so a
// test can tell whether the library was ever opened: a refused plugin must leave none.
// Built a second time with NNPLUG_FAKE_MARKER_SUFFIX, its mark goes to a file of that
// suffix, so a test swapping one build for the other can tell which one ran.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fake_backend.h"

namespace {

#ifndef NNPLUG_FAKE_MARKER_SUFFIX
#define NNPLUG_FAKE_MARKER_SUFFIX ""
#endif

__attribute__((constructor)) void leave_mark() {
    if (const char* marker = std::getenv("NNPLUG_FAKE_MARKER")) {
        const std::string path = std::string(marker) + NNPLUG_FAKE_MARKER_SUFFIX;
        if (std::FILE* file = std::fopen(path.c_str(), "w")) std::fclose(file);
    }
}

const nnplug_plugin kPlugin = fake::table("marker");

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &kPlugin;
}
