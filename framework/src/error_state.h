// The per-thread message behind aclGetRecentErrMsg.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

namespace nnplug {

// Replaces this thread's recent error message, bytes outside printable ASCII escaped
// (nnplug/escaped_text.h); also logged at debug level.
void set_last_error(const std::string& message);
const char* last_error();

template <typename... Args>
void set_last_error(fmt::format_string<Args...> format, Args&&... args) {
    set_last_error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace nnplug
