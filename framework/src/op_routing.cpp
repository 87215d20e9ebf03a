#include "op_routing.h"

#include <fmt/format.h>

#include "logging.h"
#include "plugin_locator.h"

namespace nnplug {
namespace {

std::filesystem::path real_path(const std::filesystem::path& file) {
    std::error_code failure;
    auto resolved = std::filesystem::canonical(file, failure);
    return failure ? file : resolved;
}

}  // namespace

RoutedBackend::RoutedBackend(PluginLibrary library, DeviceContext device)
    : library_(std::move(library)), device_(device) {}

RoutedBackend::~RoutedBackend() {
    destroy_device_context(plugin(), device_);
}

OpRouting::OpRouting(const RuntimeConfig& config, const PluginLibrary& primary,
                     const std::vector<std::filesystem::path>& search_path) {
    for (int kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind) {
        const auto routed = config.op_backends.find(nnplug_op_api_name(kind));
        targets_[static_cast<size_t>(kind)] = routed == config.op_backends.end()
                                                  ? RouteTarget{primary.table().name, nullptr, {}}
                                                  : resolve(routed->second, config, primary, search_path);
    }
    if (!config.fallback.empty()) fallback_ = resolve(config.fallback, config, primary, search_path);
}

RouteTarget OpRouting::resolve(const std::string& reference, const RuntimeConfig& config,
                               const PluginLibrary& primary,
                               const std::vector<std::filesystem::path>& search_path) {
    for (const auto& [seen, target] : resolved_)
        if (seen == reference) return target;
    RouteTarget target{reference, nullptr, {}};
    const nnplug_plugin& device_backend = primary.table();
    const bool is_path = reference.find('/') != std::string::npos;
    if (reference == config.backend || (!is_path && reference == device_backend.name)) {
        target.name = device_backend.name;
        resolved_.emplace_back(reference, target);
        return target;
    }
    std::string error;
    auto library = load_backend(reference, search_path, config.allow_insecure_plugins, error);
    if (library && real_path(library->file()) == real_path(primary.file())) {
        target.name = device_backend.name;  // the device's backend, by another spelling
        resolved_.emplace_back(reference, target);
        return target;
    }
    if (library) {
        const std::string name = library->table().name;
        std::string owner;
        if (name == device_backend.name) owner = primary.file().string();
        for (const auto& backend : backends_)
            if (name == backend->plugin().name) owner = backend->file().string();
        if (!owner.empty()) {
            error = fmt::format("plugin '{}' refused: it is named '{}', like the plugin '{}' already loaded",
                                library->file().string(), name, owner);
            library.reset();
        }
    }
    if (library) {
        target.name = library->table().name;
        std::vector<nnplug_option> options;
        DeviceContext device;
        nnplug_status status = NNPLUG_OK;
        if (!backend_options(library->table(), config, options, error) ||
            !create_device_context(library->table(), options, 0, device, status, error)) {
            error = fmt::format("plugin '{}' cannot serve: {}", library->file().string(), error);
            library.reset();
        } else {
            backends_.push_back(std::make_unique<RoutedBackend>(std::move(*library), device));
            target.routed = backends_.back().get();
            log().info(
                "backend '{}' ({}) loaded for routing from {}", target.name,
                target.routed->plugin().description != nullptr ? target.routed->plugin().description : "",
                target.routed->file().string());
        }
    }
    if (target.routed == nullptr) {
        target.unavailable = error;
        log().error("{}", error);
    }
    resolved_.emplace_back(reference, target);
    return target;
}

void OpRouting::warn_once(const std::string& key, const std::string& message) {
    {
        std::lock_guard lock(warned_mutex_);
        if (!warned_.insert(key).second) return;
    }
    log().warn("{}", message);
}

}  // namespace nnplug
