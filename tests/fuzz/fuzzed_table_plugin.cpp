// A plugin whose table is made of fuzz input, for fuzz_plugin_table: its entry reads the
// bytes the fuzz target left in `nnplug_fuzz_table_input` (found with dlsym in the program
// that loads it) and builds every member from them: versions and sizes, texts that are
// good, null, empty, too long, holding control bytes, running into an unreadable page or
// pointing at the never-mapped first page, counts small or huge, arrays and tables good,
// null or wild, function pointers present or not.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_backend.h"

extern "C" {
struct nnplug_fuzz_input {
    const uint8_t* data;
    size_t size;
};
}

namespace {

// Reads the input a byte at a time; zeros once it runs out.
class Bytes {
public:
    Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
    uint32_t next32() {
        uint32_t value = 0;
        for (int i = 0; i < 4; ++i) value = value << 8 | next();
        return value;
    }

private:
    const uint8_t* data_;
    size_t size_;
    size_t at_ = 0;
};

const void* const kWild = reinterpret_cast<const void*>(std::uintptr_t{0x10});

// The last bytes of a readable page without a NUL, the next page unreadable.
const char* unterminated() {
    static const char* text = [] {
        const long page = sysconf(_SC_PAGESIZE);
        void* pages = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) return "";
        char* end = static_cast<char*>(pages) + page;
        std::memset(end - 16, 'x', 16);
        mprotect(end, static_cast<size_t>(page), PROT_NONE);
        return static_cast<const char*>(end - 16);
    }();
    return text;
}

const char* text(Bytes& bytes, const char* good) {
    static const std::string kLong(5000, 'y');
    switch (bytes.next() % 8) {
        case 0:
            return nullptr;
        case 1:
            return "";
        case 2:
            return "line\nbreak\x1b[2J";
        case 3:
            return kLong.c_str();
        case 4:
            return unterminated();
        case 5:
            return static_cast<const char*>(kWild);
        default:
            return good;
    }
}

template <typename T>
const T* pointer(Bytes& bytes, const T* good) {
    switch (bytes.next() % 4) {
        case 0:
            return nullptr;
        case 1:
            return static_cast<const T*>(kWild);
        default:
            return good;
    }
}

size_t count(Bytes& bytes, size_t good) {
    switch (bytes.next() % 6) {
        case 0:
            return 0;
        case 1:
            return bytes.next32();
        case 2:
            return SIZE_MAX;
        case 3:
            return good + 1;
        default:
            return good;
    }
}

uint32_t struct_size(Bytes& bytes, uint32_t good) {
    switch (bytes.next() % 5) {
        case 0:
            return bytes.next32();
        case 1:
            return good - 8;
        case 2:
            return good + 64;
        default:
            return good;
    }
}

// `count` elements that end where an unreadable page begins: a table that declares one
// element more than its array holds points the loader at memory it cannot read, which its
// probe must refuse (past a global array the memory is readable and reading it is
// undefined, so no loader could tell).
template <typename T, size_t count>
T* before_guard_page() {
    static T* elements = [] {
        const long page = sysconf(_SC_PAGESIZE);
        void* pages = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) std::abort();
        char* end = static_cast<char*>(pages) + page;
        mprotect(end, static_cast<size_t>(page), PROT_NONE);
        static_assert(sizeof(T) % alignof(T) == 0);
        return reinterpret_cast<T*>(end - count * sizeof(T));
    }();
    return elements;
}

nnplug_plugin g_table;
nnplug_device_i g_device;
nnplug_op_i g_ops[3];
const nnplug_op_i** const g_op_pointers = before_guard_page<const nnplug_op_i*, 3>();
nnplug_option_info* const g_options = before_guard_page<nnplug_option_info, 2>();

void build(Bytes& bytes) {
    g_table = fake::table("fuzzed");
    g_table.abi_version = bytes.next() % 8 == 0 ? bytes.next32() : NNPLUG_PLUGIN_ABI_VERSION;
    g_table.struct_size = struct_size(bytes, sizeof(nnplug_plugin));
    g_table.name = text(bytes, "fuzzed");
    g_table.description = text(bytes, "a table made of fuzz input");
    for (size_t i = 0; i < 2; ++i)
        g_options[i] = {text(bytes, "threads"), text(bytes, "0"), text(bytes, "worker threads")};
    g_table.options = pointer(bytes, g_options);
    g_table.option_count = count(bytes, 2);
    const uint8_t functions = bytes.next();
    if (functions & 1) g_table.create = nullptr;
    if (functions & 2) g_table.destroy = nullptr;
    if (functions & 4) g_table.soc_name = nullptr;
    if (functions & 8) g_table.last_error = nullptr;
    g_device = fake::kDevice;
    g_device.struct_size = struct_size(bytes, sizeof(nnplug_device_i));
    g_device.memory_kind = static_cast<int32_t>(bytes.next() % 4);
    if (bytes.next() % 8 == 0) g_device.malloc = nullptr;
    g_table.device = pointer(bytes, &g_device);
    for (size_t i = 0; i < 3; ++i) {
        g_ops[i] = fake::kBackward;
        g_ops[i].struct_size = struct_size(bytes, sizeof(nnplug_op_i));
        g_ops[i].op = static_cast<int32_t>(bytes.next()) - 2;
        g_ops[i].name = text(bytes, "aclnnBinaryCrossEntropyBackward");
        if (bytes.next() % 8 == 0) g_ops[i].prepare = nullptr;
        g_op_pointers[i] = pointer(bytes, &g_ops[i]);
    }
    g_table.ops = pointer(bytes, static_cast<const nnplug_op_i* const*>(g_op_pointers));
    g_table.op_count = count(bytes, 3);
}

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    const auto* input = static_cast<const nnplug_fuzz_input*>(dlsym(RTLD_DEFAULT, "nnplug_fuzz_table_input"));
    Bytes bytes(input != nullptr ? input->data : nullptr, input != nullptr ? input->size : 0);
    build(bytes);
    switch (bytes.next() % 16) {
        case 0:
            return nullptr;
        case 1:
            return static_cast<const nnplug_plugin*>(kWild);
        default:
            return &g_table;
    }
}
