#include "plugin_library.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <set>

namespace nnplug {
namespace {

// The first members every version of the table keeps: what we read before trusting more.
struct TableHeader {
    uint32_t abi_version;
    uint32_t struct_size;
};

// Bounds that no real plugin comes near; a larger count is a corrupt table.
constexpr size_t kMaxOps = 4096;
constexpr size_t kMaxOptions = 4096;

// The size of a table up to and including member `last`: the least version 2 needs.
template <typename Table, typename Member>
uint32_t size_through(Member Table::*last) {
    const Table probe{};
    const auto* base = reinterpret_cast<const char*>(&probe);
    return static_cast<uint32_t>(reinterpret_cast<const char*>(&(probe.*last)) - base + sizeof(Member));
}

bool table_complete(const nnplug_plugin& table, std::string& missing) {
    const std::pair<const void*, const char*> required[] = {
        {table.name, "name"},
        {reinterpret_cast<const void*>(table.create), "create"},
        {reinterpret_cast<const void*>(table.destroy), "destroy"},
        {reinterpret_cast<const void*>(table.soc_name), "soc_name"},
        {reinterpret_cast<const void*>(table.dtype_mask), "dtype_mask"},
        {reinterpret_cast<const void*>(table.last_error), "last_error"},
        {table.device, "device"},
    };
    for (const auto& [pointer, name] : required) {
        if (pointer == nullptr) {
            missing = fmt::format("has no '{}'", name);
            return false;
        }
    }
    if (table.option_count > kMaxOptions || (table.option_count > 0 && table.options == nullptr)) {
        missing = fmt::format("declares {} options but no valid options array", table.option_count);
        return false;
    }
    for (size_t i = 0; i < table.option_count; ++i) {
        if (table.options[i].key == nullptr) {
            missing = fmt::format("has an option without a key (options[{}])", i);
            return false;
        }
    }
    const nnplug_device_i& device = *table.device;
    if (device.struct_size < size_through(&nnplug_device_i::stream_synchronize)) {
        missing = fmt::format("has a device table of {} bytes, smaller than version 2's {}", device.struct_size,
                              size_through(&nnplug_device_i::stream_synchronize));
        return false;
    }
    const std::pair<const void*, const char*> device_required[] = {
        {reinterpret_cast<const void*>(device.malloc), "device.malloc"},
        {reinterpret_cast<const void*>(device.free), "device.free"},
        {reinterpret_cast<const void*>(device.memcpy), "device.memcpy"},
        {reinterpret_cast<const void*>(device.memset), "device.memset"},
        {reinterpret_cast<const void*>(device.stream_create), "device.stream_create"},
        {reinterpret_cast<const void*>(device.stream_destroy), "device.stream_destroy"},
        {reinterpret_cast<const void*>(device.stream_synchronize), "device.stream_synchronize"},
    };
    for (const auto& [pointer, name] : device_required) {
        if (pointer == nullptr) {
            missing = fmt::format("has no '{}'", name);
            return false;
        }
    }
    if (table.op_count > kMaxOps || (table.op_count > 0 && table.ops == nullptr)) {
        missing = fmt::format("declares {} ops but no valid ops array", table.op_count);
        return false;
    }
    std::set<int32_t> listed;
    for (size_t i = 0; i < table.op_count; ++i) {
        const nnplug_op_i* op = table.ops[i];
        if (op == nullptr) {
            missing = fmt::format("has a null ops[{}]", i);
            return false;
        }
        const char* name = op->name != nullptr ? op->name : "(unnamed)";
        if (op->struct_size < size_through(&nnplug_op_i::release)) {
            missing = fmt::format("has an op table {} of {} bytes, smaller than version 2's {}", name, op->struct_size,
                                  size_through(&nnplug_op_i::release));
            return false;
        }
        if (op->name == nullptr || op->prepare == nullptr || op->launch == nullptr) {
            missing = fmt::format("has no name, prepare or launch in ops[{}] ({})", i, name);
            return false;
        }
        if (!listed.insert(op->op).second) {
            missing = fmt::format("lists op {} ({}) twice", op->op, name);
            return false;
        }
    }
    return true;
}

}  // namespace

std::optional<PluginLibrary> PluginLibrary::load(const std::filesystem::path& file, std::string& error) {
    boost::dll::shared_library library;
    try {
        library.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& exception) {
        error = fmt::format("'{}' is not a loadable plugin: {}", file.string(), exception.what());
        return std::nullopt;
    }
    if (!library.has(NNPLUG_PLUGIN_ENTRY_NAME)) {
        error = fmt::format("'{}' is not an nnplug plugin: it does not export '{}'", file.string(),
                            NNPLUG_PLUGIN_ENTRY_NAME);
        return std::nullopt;
    }
    const auto entry = library.get<const nnplug_plugin*()>(NNPLUG_PLUGIN_ENTRY_NAME);
    const nnplug_plugin* table = nullptr;
    try {
        table = entry();
    } catch (...) {
        error = fmt::format("'{}': its entry symbol threw an exception", file.string());
        return std::nullopt;
    }
    if (table == nullptr) {
        error = fmt::format("'{}': its entry symbol returned no table", file.string());
        return std::nullopt;
    }
    TableHeader header;
    std::memcpy(&header, table, sizeof header);
    if (header.abi_version != NNPLUG_PLUGIN_ABI_VERSION) {
        error = fmt::format("'{}' was built for plugin ABI version {}, this runtime speaks version {}: rebuild it "
                            "against this nnplug's SDK",
                            file.string(), header.abi_version, NNPLUG_PLUGIN_ABI_VERSION);
        return std::nullopt;
    }
    // Read as "at least this big": a newer plugin may append members this runtime ignores.
    if (header.struct_size < size_through(&nnplug_plugin::op_count)) {
        error = fmt::format("'{}' declares a plugin table of {} bytes, smaller than version {}'s {}", file.string(),
                            header.struct_size, NNPLUG_PLUGIN_ABI_VERSION, size_through(&nnplug_plugin::op_count));
        return std::nullopt;
    }
    std::string missing;
    if (!table_complete(*table, missing)) {
        error = fmt::format("'{}': its plugin table {}", file.string(), missing);
        return std::nullopt;
    }
    return PluginLibrary(std::move(library), table, file);
}

}  // namespace nnplug
