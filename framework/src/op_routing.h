// Per-op routing: which backend runs each op, and where a call goes when that backend
// lacks the op, did not load or refuses the call (the fallback). The device's backend
// (the config's `backend`) owns memory, streams and devices; a backend loaded for routing
// gets one context and runs only calls whose memory it can read (both use host memory).
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend_setup.h"
#include "plugin_library.h"
#include "runtime_config.h"

namespace nnplug {

// A plugin other than the device's backend, loaded because the config routes ops to it.
class RoutedBackend {
public:
    RoutedBackend(PluginLibrary library, DeviceContext device);
    ~RoutedBackend();  // destroys its context; every plan of it must be released first
    RoutedBackend(const RoutedBackend&) = delete;
    RoutedBackend& operator=(const RoutedBackend&) = delete;

    const nnplug_plugin& plugin() const { return library_.table(); }
    void* context() const { return device_.context; }
    void* stream() const { return device_.default_stream; }
    const std::filesystem::path& file() const { return library_.file(); }
    // Held for a launch and the wait for it, so each routed call sees its own errors.
    std::mutex& launch_mutex() { return launch_mutex_; }

private:
    PluginLibrary library_;
    DeviceContext device_;
    std::mutex launch_mutex_;
};

// Where an op's calls go.
struct RouteTarget {
    std::string name;                 // the backend as the config names it
    RoutedBackend* routed = nullptr;  // null: the device's backend (or, with a reason below, none)
    std::string unavailable;          // why the backend cannot serve (it did not load); empty when it can
};

class OpRouting {
public:
    // Loads every backend the config routes an op to or falls back to, apart from the
    // device's backend `primary`. One that cannot be used (not found, refused by the trust
    // rules, not a plugin, a name another plugin has, bad options, create failed) is logged
    // in one line naming its path and the reason; the ops routed to it fall back, or fail
    // with that reason, and every other backend keeps working.
    OpRouting(const RuntimeConfig& config, const PluginLibrary& primary,
              const std::vector<std::filesystem::path>& search_path);

    const RouteTarget& target(nnplug_op_kind kind) const { return targets_[static_cast<size_t>(kind)]; }
    const RouteTarget* fallback() const { return fallback_ ? &*fallback_ : nullptr; }
    const std::vector<std::unique_ptr<RoutedBackend>>& backends() const { return backends_; }

    // Logs message as a warning the first time key is seen (one warning per op and reason).
    void warn_once(const std::string& key, const std::string& message);

private:
    RouteTarget resolve(const std::string& reference, const RuntimeConfig& config,
                        const PluginLibrary& primary, const std::vector<std::filesystem::path>& search_path);

    std::vector<std::unique_ptr<RoutedBackend>> backends_;
    std::vector<std::pair<std::string, RouteTarget>> resolved_;  // each reference loaded once
    std::array<RouteTarget, NNPLUG_OP_KIND_COUNT> targets_;
    std::optional<RouteTarget> fallback_;  // none: calls its target refuses fail
    std::mutex warned_mutex_;
    std::set<std::string> warned_;
};

}  // namespace nnplug
