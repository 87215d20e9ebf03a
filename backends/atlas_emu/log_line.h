// Debug lines of the emulator, in the runtime's format. Backends do not link the
// runtime's logger, so the plugin prints its own lines to stderr at its own level.
#pragma once

#include <optional>
#include <string>

namespace nnplug::emu {

enum class LogLevel { trace = 0, debug, info, warn, error, critical, off };

// "trace", "debug", "info", "warn" (or "warning"), "error", "critical", "off".
std::optional<LogLevel> parse_log_level(const std::string& name);

// "[HH:MM:SS.mmm] [nnplug] [debug] message" on stderr.
void write_log_line(LogLevel level, const std::string& message);

}  // namespace nnplug::emu
