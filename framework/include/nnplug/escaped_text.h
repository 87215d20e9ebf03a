// Text from users, files and plugins made safe to print. Part of libnnplug for the project's
// own tools (the runtime's messages and log, nnplug info, the conformance kit, the training
// example); not installed, not a stable interface for programs.
#pragma once

#include <string>
#include <string_view>

namespace nnplug {

// text with every byte outside printable ASCII (below 0x20, 0x7f and above) written as
// \xNN: a newline, a terminal escape or an 8-bit control (CSI, say, in its UTF-8 form) can
// neither start a line of its own nor move the cursor over what is printed. A backslash
// stays as it is, so escaping is idempotent: text escaped where a message is built and
// again where it is printed reads the same as text escaped once.
__attribute__((visibility("default"))) std::string escaped(std::string_view text);

}  // namespace nnplug
