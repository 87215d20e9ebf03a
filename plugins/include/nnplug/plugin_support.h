/*
 * Header-only C++ helpers for writing an nnplug plugin: the one error channel
 * (thread-local message plus fail()), the exception fence every entry point needs,
 * option parsing, and tables filled member by member instead of by position.
 * Each plugin that includes it gets its own copies (build plugins with hidden symbols).
 */
#ifndef NNPLUG_PLUGIN_SUPPORT_H
#define NNPLUG_PLUGIN_SUPPORT_H

#include <nnplug/plugin.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace nnplug::sdk {

// The message last_error() returns on this thread.
inline std::string& recent_error() {
    thread_local std::string text;
    return text;
}

// Leaves message for last_error() and returns status, for `return fail(...)`.
inline nnplug_status fail(nnplug_status status, std::string message) {
    recent_error() = std::move(message);
    return status;
}

// The plugin table's last_error member.
inline const char* last_error(void*) {
    return recent_error().c_str();
}

// Runs body() and turns any exception into a status with a message, so that nothing
// crosses the C boundary: `return sdk::fenced("launch", [&] { ... return NNPLUG_OK; });`
template <typename Body>
nnplug_status fenced(const char* what, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(NNPLUG_ERR_OUT_OF_MEMORY, std::string(what) + ": out of host memory");
    } catch (const std::exception& exception) {
        return fail(NNPLUG_ERR_INTERNAL, std::string(what) + ": " + exception.what());
    } catch (...) {
        return fail(NNPLUG_ERR_INTERNAL, std::string(what) + ": unknown exception");
    }
}

// A whole number in [minimum, maximum], nothing else in text.
inline bool parse_integer(const char* text, long long minimum, long long maximum, long long& value) {
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && value >= minimum && value <= maximum;
}

// A finite number >= 0, nothing else in text.
inline bool parse_nonnegative(const char* text, double& value) {
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' && std::isfinite(value) && value >= 0;
}

// true/on/yes/1 or false/off/no/0.
inline bool parse_bool(std::string_view text, bool& value) {
    if (text == "true" || text == "on" || text == "yes" || text == "1") return value = true, true;
    if (text == "false" || text == "off" || text == "no" || text == "0") return value = false, true;
    return false;
}

// An environment variable, or null when it is unset or empty.
inline const char* environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// A zeroed ABI struct with struct_size set: fill its members by name afterwards,
//   const nnplug_op_i kForward = [] { auto op = sdk::table<nnplug_op_i>(); op.prepare = ...; return op; }();
// so that no member is ever set by position.
template <typename Table>
Table table() {
    Table value;
    std::memset(static_cast<void*>(&value), 0, sizeof value);
    value.struct_size = sizeof(Table);
    return value;
}

// The operand at slot of desc (present or not).
inline const nnplug_tensor& operand(const nnplug_op_desc& desc, int slot) {
    return desc.operands[slot];
}

inline bool present(const nnplug_tensor& t) {
    return (t.flags & NNPLUG_OPERAND_PRESENT) != 0;
}
inline bool reduced(const nnplug_tensor& t) {
    return (t.flags & NNPLUG_OPERAND_REDUCED) != 0;
}
inline bool is_output(const nnplug_tensor& t) {
    return (t.flags & NNPLUG_OPERAND_OUTPUT) != 0;
}

// The reduction, the mean's scale and N of a call (defaults: none, 1, numel).
inline int64_t reduction(const nnplug_op_desc& desc) {
    return nnplug_attr_i64(&desc, NNPLUG_ATTR_REDUCTION, NNPLUG_REDUCTION_NONE);
}
inline float scale(const nnplug_op_desc& desc) {
    return static_cast<float>(nnplug_attr_f64(&desc, NNPLUG_ATTR_SCALE, 1.0));
}
inline int64_t reduce_count(const nnplug_op_desc& desc) {
    return nnplug_attr_i64(&desc, NNPLUG_ATTR_REDUCE_COUNT, desc.numel);
}

// Address of element `element` (in elements from data) of t.
inline const char* element_address(const nnplug_tensor& t, int64_t element) {
    return static_cast<const char*>(t.data) + element * static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}
inline char* element_address_mutable(const nnplug_tensor& t, int64_t element) {
    return static_cast<char*>(t.data) + element * static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}

}  // namespace nnplug::sdk

#endif /* NNPLUG_PLUGIN_SUPPORT_H */
