// libFuzzer target: plugin loading. The input becomes the table of a test plugin
// (fuzzed_table_plugin.cpp), loaded through the runtime's loader (load_backend: the trust
// checks on its descriptor, the dlopen, the member-by-member table checks). Any outcome is
// fine except a crash, a sanitizer report, a refusal without a one-line reason, or a table
// accepted with a member the checks promise (docs/plugin-abi.md) broken.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin_library.h"
#include "plugin_locator.h"

extern "C" {
struct nnplug_fuzz_input {
    const uint8_t* data;
    size_t size;
};
// Read by the plugin's entry through dlsym: exported from this program (ENABLE_EXPORTS).
__attribute__((visibility("default"))) nnplug_fuzz_input nnplug_fuzz_table_input = {nullptr, 0};
}

namespace {

[[noreturn]] void broken(const char* what) {
    std::fprintf(stderr, "fuzz_plugin_table: contract broken: %s\n", what);
    std::abort();
}

bool one_line_text(const char* text, size_t limit, bool required) {
    if (text == nullptr) return !required;
    const size_t length = strnlen(text, limit + 1);
    if (length > limit || (required && length == 0)) return false;
    for (size_t i = 0; i < length; ++i)
        if (static_cast<unsigned char>(text[i]) < 0x20 || text[i] == 0x7f) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    nnplug_fuzz_table_input = {data, size};
    std::string error;
    auto library = nnplug::load_backend(NNPLUG_FUZZED_TABLE_PLUGIN, {}, false, error);
    if (!library) {
        if (error.empty() || error.find('\n') != std::string::npos)
            broken("a refusal without a one-line reason");
        return 0;
    }
    const nnplug_plugin& table = library->table();
    if (table.abi_version != NNPLUG_PLUGIN_ABI_VERSION) broken("a table of another ABI version accepted");
    if (!one_line_text(table.name, nnplug::kMaxPluginNameBytes, true)) broken("a bad name accepted");
    if (!one_line_text(table.description, nnplug::kMaxPluginTextBytes, false))
        broken("a bad description accepted");
    if (table.create == nullptr || table.destroy == nullptr || table.device == nullptr)
        broken("a table without create, destroy or device accepted");
    if (table.op_count > nnplug::kMaxPluginOps || table.option_count > nnplug::kMaxPluginOptions)
        broken("a count over its limit accepted");
    for (size_t i = 0; i < table.op_count; ++i)
        if (table.ops[i] == nullptr || !one_line_text(table.ops[i]->name, nnplug::kMaxPluginNameBytes, true))
            broken("a bad op accepted");
    for (size_t i = 0; i < table.option_count; ++i)
        if (!one_line_text(table.options[i].key, nnplug::kMaxPluginNameBytes, true))
            broken("a bad option accepted");
    return 0;
}
