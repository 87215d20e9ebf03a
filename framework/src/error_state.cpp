#include "error_state.h"

#include <nnplug/escaped_text.h>

#include "logging.h"

namespace nnplug {
namespace {
thread_local std::string recent_error;
}

void set_last_error(const std::string& message) {
    // Messages quote config values and plugin text: one line each of a few KiB at most,
    // whatever those hold.
    recent_error = bounded_line(message);
    log().debug("error: {}", recent_error);
}

const char* last_error() {
    return recent_error.c_str();
}

}  // namespace nnplug
