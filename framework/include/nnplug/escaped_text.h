// Text from users, files and plugins made safe to print. Part of libnnplug for the project's
// own tools (the runtime's messages and log, nnplug info, the conformance kit, the training
// example); not installed, not a stable interface for programs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nnplug {

// text with every byte outside printable ASCII (below 0x20, 0x7f and above) written as
// \xNN: a newline, a terminal escape or an 8-bit control (CSI, say, in its UTF-8 form) can
// neither start a line of its own nor move the cursor over what is printed. A backslash
// stays as it is, so escaping is idempotent: text escaped where a message is built and
// again where it is printed reads the same as text escaped once.
__attribute__((visibility("default"))) std::string escaped(std::string_view text);

// The most bytes of a value quoted in a message (kBriefBytes) and of a whole message line
// (kLineBytes), before escaping.
inline constexpr size_t kBriefBytes = 256;
inline constexpr size_t kLineBytes = 4096;

// A value to quote in a message: escaped, and when it is longer than `keep` bytes its first
// `keep` followed by "... (N bytes)", so that a value of megabytes leaves a short message.
__attribute__((visibility("default"))) std::string brief(std::string_view text, size_t keep = kBriefBytes);

// A whole message line kept to about `limit` bytes, escaped: a longer one keeps its start
// (what failed) and its end (why), with "... (N bytes left out) ..." between.
__attribute__((visibility("default"))) std::string bounded_line(std::string_view text,
                                                                size_t limit = kLineBytes);

}  // namespace nnplug
