#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <nnplug/inventory.h>
#include <nnplug/plugin.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "backend_setup.h"
#include "logging.h"
#include "op_routing.h"
#include "plugin_locator.h"
#include "runtime_config.h"

namespace nnplug {
namespace {

namespace fs = std::filesystem;

// Every libnnplug_<name>.so of the search path, in order; a name already found earlier
// is shadowed (aclInit would never load it), which the report says.
std::vector<std::pair<fs::path, std::string>> plugin_files(const std::vector<fs::path>& search_path) {
    std::vector<std::pair<fs::path, std::string>> files;  // file, the earlier file of its name
    std::vector<std::pair<std::string, fs::path>> first;
    for (const auto& folder : search_path) {
        std::error_code ignored;
        std::vector<fs::path> entries;
        for (const auto& entry : fs::directory_iterator(folder, ignored)) entries.push_back(entry.path());
        std::sort(entries.begin(), entries.end());
        for (const auto& entry : entries) {
            const auto backend = backend_of_file_name(entry.filename().string());
            if (!backend) continue;
            const std::string& name = *backend;
            const auto earlier =
                std::find_if(first.begin(), first.end(), [&](const auto& f) { return f.first == name; });
            if (earlier != first.end()) {
                files.emplace_back(entry, earlier->second.string());
            } else {
                first.emplace_back(name, entry);
                files.emplace_back(entry, std::string());
            }
        }
    }
    return files;
}

PluginReport describe(const fs::path& file, const RuntimeConfig& config,
                      const std::vector<fs::path>& search_path) {
    PluginReport report;
    report.path = file.string();
    std::string error;
    // By path, so that the trust rules and table checks are exactly aclInit's.
    auto library =
        load_backend(fs::absolute(file).string(), search_path, config.allow_insecure_plugins, error);
    if (!library) {
        report.refused = error;
        return report;
    }
    const nnplug_plugin& plugin = library->table();
    report.name = plugin.name;
    report.description = plugin.description != nullptr ? plugin.description : "";
    report.abi_version = plugin.abi_version;
    report.memory = plugin.device->memory_kind == NNPLUG_MEMORY_HOST ? "host" : "device";
    for (size_t i = 0; i < plugin.op_count; ++i) report.ops.emplace_back(plugin.ops[i]->name);
    std::vector<nnplug_option> options;
    DeviceContext device;
    nnplug_status status = NNPLUG_OK;
    if (!backend_options(plugin, config, options, error) ||
        !create_device_context(plugin, options, 0, device, status, error)) {
        report.refused = error;
        return report;
    }
    const char* soc = soc_name_of(plugin, device.context);
    report.soc = soc != nullptr ? soc : "?";
    const uint32_t mask = plugin.dtype_mask(device.context);
    for (int dtype = 0; dtype < NNPLUG_DTYPE_COUNT; ++dtype)
        if (mask & NNPLUG_DTYPE_BIT(dtype)) report.dtypes.emplace_back(nnplug_dtype_name(dtype));
    report.device_count = plugin.device_count != nullptr ? plugin.device_count(device.context) : 1;
    destroy_device_context(plugin, device);
    return report;
}

bool has_op(const nnplug_plugin& plugin, int kind) {
    for (size_t i = 0; i < plugin.op_count; ++i)
        if (plugin.ops[i]->op == kind) return true;
    return false;
}

// Where each op's calls go, decided by the same routing aclInit builds.
void describe_routes(const RuntimeConfig& config, const std::vector<fs::path>& search_path,
                     Inventory& inventory) {
    std::string error;
    auto primary = load_backend(config.backend, search_path, config.allow_insecure_plugins, error);
    if (!primary) {
        for (int kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind)
            inventory.routes.push_back(
                {nnplug_op_api_name(kind), config.backend, "the backend cannot load: " + error});
        return;
    }
    const OpRouting routing(config, *primary, search_path);
    const RouteTarget* fallback = routing.fallback();
    const auto serves = [&](const RouteTarget& target, int kind) {
        if (!target.unavailable.empty()) return false;
        return has_op(target.routed != nullptr ? target.routed->plugin() : primary->table(), kind);
    };
    for (int kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind) {
        const RouteTarget& target = routing.target(static_cast<nnplug_op_kind>(kind));
        OpRouteReport report{nnplug_op_api_name(kind), target.name, {}};
        std::string problem;
        if (!target.unavailable.empty())
            problem = "not available: " + target.unavailable;
        else if (!serves(target, kind))
            problem = fmt::format("backend '{}' does not implement it", target.name);
        const bool other_fallback = fallback != nullptr && fallback->name != target.name;
        const bool separate_memory =
            target.routed != nullptr && (primary->table().device->memory_kind != NNPLUG_MEMORY_HOST ||
                                         target.routed->plugin().device->memory_kind != NNPLUG_MEMORY_HOST);
        if (separate_memory && problem.empty())
            report.note = fmt::format(
                "every call is refused: the tensors are memory of '{}', and an op runs on "
                "another backend only when both use host memory",
                primary->table().name);
        else if (!problem.empty())
            report.note =
                other_fallback
                    ? fmt::format("{}; its calls go to the fallback '{}'{}", problem, fallback->name,
                                  serves(*fallback, kind) ? "" : ", which cannot serve it either")
                    : problem + "; its calls fail";
        else if (other_fallback)
            report.note = fmt::format("calls it refuses go to the fallback '{}'", fallback->name);
        inventory.routes.push_back(std::move(report));
    }
}

// Every text of the inventory comes from a config file or a plugin; `nnplug info` prints
// it, so bytes outside printable ASCII are written as \xNN here, once, and each is bounded to
// a few KiB.
void escape_for_printing(Inventory& inventory) {
    for (std::string* text :
         {&inventory.config_file, &inventory.config_error, &inventory.backend, &inventory.fallback})
        *text = bounded_line(*text);
    for (std::string& folder : inventory.search_path) folder = bounded_line(folder);
    for (PluginReport& plugin : inventory.plugins) {
        for (std::string* text :
             {&plugin.path, &plugin.refused, &plugin.name, &plugin.description, &plugin.soc})
            *text = bounded_line(*text);
        for (std::string& op : plugin.ops) op = bounded_line(op);
    }
    for (OpRouteReport& route : inventory.routes)
        for (std::string* text : {&route.op, &route.backend, &route.note}) *text = bounded_line(*text);
}

}  // namespace

Inventory take_inventory(const char* config_path) {
    Inventory inventory;
    RuntimeConfig config;
    ConfigError failure;
    if (!load_effective_config(config_path, config, failure)) inventory.config_error = failure.message;
    inventory.config_file = config.source;
    inventory.backend = config.backend;
    inventory.fallback = config.fallback.empty() ? "none" : config.fallback;
    // Plugins speak through the runtime's log; here each problem is in the report instead.
    log().set_level(spdlog::level::off);
    const auto search_path = plugin_search_path(config.plugin_paths);
    for (const auto& folder : search_path) inventory.search_path.push_back(folder.string());
    for (const auto& [file, earlier] : plugin_files(search_path)) {
        if (!earlier.empty()) {
            PluginReport report;
            report.path = file.string();
            report.refused = fmt::format("shadowed by '{}', which comes first on the search path", earlier);
            inventory.plugins.push_back(std::move(report));
            continue;
        }
        inventory.plugins.push_back(describe(file, config, search_path));
    }
    // Backends the config names by path, outside the search path.
    std::vector<std::string> references = {config.backend, config.fallback};
    for (const auto& [op, backend] : config.op_backends) references.push_back(backend);
    for (const auto& reference : references) {
        if (reference.find('/') == std::string::npos) continue;
        const auto listed =
            std::find_if(inventory.plugins.begin(), inventory.plugins.end(), [&](const auto& p) {
                std::error_code ignored;
                return fs::equivalent(p.path, reference, ignored);
            });
        if (listed == inventory.plugins.end()) {
            PluginReport report = describe(reference, config, search_path);
            report.path = reference;
            inventory.plugins.push_back(std::move(report));
        }
    }
    if (inventory.config_error.empty()) describe_routes(config, search_path, inventory);
    escape_for_printing(inventory);
    return inventory;
}

}  // namespace nnplug
