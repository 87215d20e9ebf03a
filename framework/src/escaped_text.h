// Text from users and plugins made safe to print: one line, no terminal control.
#pragma once

#include <string>
#include <string_view>

namespace nnplug {

// text with every control byte (below 0x20, and 0x7f) written as \xNN: a newline, an
// escape sequence or a carriage return from a config value or a plugin message can
// neither start a line of its own nor move the cursor over what is printed.
std::string escaped(std::string_view text);

}  // namespace nnplug
