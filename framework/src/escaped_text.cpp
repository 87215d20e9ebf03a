#include <nnplug/escaped_text.h>

#include <cstdio>

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

}  // namespace nnplug
