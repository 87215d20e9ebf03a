// `nnplug info`: the config in effect, the plugin search path, every plugin found there (or
// refused, with the reason) and the backend each op's calls go to.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nnplug/inventory.h>

#include <memory>
#include <string>

#include "command.h"

namespace nnplug::cli {
namespace {

int print_inventory(const std::string& config) {
    const Inventory inventory = take_inventory(config.empty() ? nullptr : config.c_str());
    fmt::print("config:      {}\n", inventory.config_file);
    if (!inventory.config_error.empty())
        fmt::print("             cannot be used: {}\n", inventory.config_error);
    fmt::print("backend:     {}\nfallback:    {}\n", inventory.backend, inventory.fallback);
    fmt::print("search path:\n");
    for (size_t i = 0; i < inventory.search_path.size(); ++i)
        fmt::print("  {}. {}\n", i + 1, inventory.search_path[i]);
    fmt::print("plugins:\n");
    size_t usable = 0;
    for (const PluginReport& plugin : inventory.plugins) {
        if (plugin.refused.empty()) {
            ++usable;
            fmt::print("  {:<12} {}\n", plugin.name, plugin.path);
            fmt::print("  {:<12} {}\n", "", plugin.description);
            fmt::print("  {:<12} ABI {}, SoC {}, {} device(s), {} memory, dtypes {}\n", "",
                       plugin.abi_version, plugin.soc, plugin.device_count, plugin.memory,
                       fmt::join(plugin.dtypes, " "));
            fmt::print("  {:<12} ops {}\n", "", fmt::join(plugin.ops, " "));
        } else {
            fmt::print("  {:<12} {}\n  {:<12} {}\n",
                       plugin.name.empty() ? "(refused)" : plugin.name + " (refused)", plugin.path, "",
                       plugin.refused);
        }
    }
    if (inventory.plugins.empty()) fmt::print("  none found\n");
    fmt::print("ops:\n");
    for (const OpRouteReport& route : inventory.routes) {
        fmt::print("  {:<48} -> {}\n", route.op, route.backend);
        if (!route.note.empty()) fmt::print("  {:<48}    {}\n", "", route.note);
    }
    fmt::print("{} plugin(s) usable, {} refused\n", usable, inventory.plugins.size() - usable);
    return inventory.config_error.empty() ? 0 : 1;
}

}  // namespace

Command info_command(CLI::App& app) {
    auto config = std::make_shared<std::string>();
    CLI::App* sub =
        app.add_subcommand("info", "Show the config, the plugins found or refused, and where each op runs");
    sub->footer(
        "Reads the config as aclInit would (--config, else $NNPLUG_CONFIG, else the installed default.yaml; "
        "NNPLUG_BACKEND, NNPLUG_LOG_LEVEL and NNPLUG_ALLOW_INSECURE_PLUGINS apply) and loads each plugin "
        "after "
        "the same trust checks. Exits 1 when the config cannot be used.");
    sub->add_option("-c,--config", *config, "the config file aclInit would be given");
    return {sub, [config] { return print_inventory(*config); }};
}

}  // namespace nnplug::cli
