#include <nnplug/escaped_text.h>

#include <cstdio>
#include <string>

namespace nnplug {

std::string escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            out += c;
            continue;
        }
        char code[5];
        std::snprintf(code, sizeof code, "\\x%02x", byte);
        out += code;
    }
    return out;
}

std::string brief(std::string_view text, size_t keep) {
    if (text.size() <= keep) return escaped(text);
    return escaped(text.substr(0, keep)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string bounded_line(std::string_view text, size_t limit) {
    if (text.size() <= limit) return escaped(text);
    // An escaped text escaped again is the same text, so a message may pass through here twice.
    const size_t head = limit / 2, tail = limit / 4;
    return escaped(text.substr(0, head)) + " ... (" + std::to_string(text.size() - head - tail) +
           " bytes left out) ... " + escaped(text.substr(text.size() - tail));
}

}  // namespace nnplug
