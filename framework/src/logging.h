// The runtime's spdlog logger ("nnplug", to stderr).
#pragma once

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

namespace nnplug {

spdlog::logger& log();

// Parses "trace", "debug", "info", "warn", "error", "critical" or "off".
std::optional<spdlog::level::level_enum> parse_log_level(const std::string& name);

}  // namespace nnplug
