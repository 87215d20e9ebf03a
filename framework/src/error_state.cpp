#include "error_state.h"

#include "logging.h"

namespace nnplug {
namespace {
thread_local std::string recent_error;
}

void set_last_error(std::string message) {
    log().debug("error: {}", message);
    recent_error = std::move(message);
}

const char* last_error() {
    return recent_error.c_str();
}

}  // namespace nnplug
