// A plugin whose table is broken in one member, chosen at build time by NNPLUG_FAKE_DEFECT
// and built as libnnplug_<defect>.so. Each must be refused when loaded, in one line, and
// never crash the host; null_description is the exception, an optional member left out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fake_backend.h"

#define NNPLUG_FAKE_TEXT(defect) NNPLUG_FAKE_QUOTE(defect)
#define NNPLUG_FAKE_QUOTE(defect) #defect

namespace {

enum class Defect {
    null_ops,                // op_count 1, ops null
    null_options,            // option_count 2, options null
    huge_op_count,           // 4000 ops over an array of 1: past the limit
    huge_option_count,       // SIZE_MAX options: the array's byte size would wrap
    null_name,               // the plugin's name is null
    long_name,               // a name of 1000 bytes
    unterminated_name,       // a name that runs into an unreadable page before its NUL
    wild_name,               // a name pointing at the never-mapped first page
    wild_table,              // the entry returns a pointer into the first page
    wild_ops,                // ops points into the first page
    wild_device,             // device points into the first page
    huge_struct_size,        // struct_size UINT32_MAX
    null_option_key,         // options[0].key is null
    null_op_name,            // ops[0].name is null
    negative_op,             // ops[0].op is -1
    bad_memory_kind,         // device.memory_kind 7
    control_in_description,  // a newline in the description
    null_description,        // optional: loads
    null_soc_name,           // soc_name() returns null: loads, its SoC shown as "unknown"
    name_255,                // a name of 255 bytes, the limit, ending at an unreadable page: loads
    name_256,                // one byte more, likewise placed: refused
};

constexpr Defect kDefect = Defect::NNPLUG_FAKE_DEFECT;
const char* const kName = NNPLUG_FAKE_TEXT(NNPLUG_FAKE_DEFECT);

// Linux never maps the first page of a process (vm.mmap_min_addr).
const void* const kWild = reinterpret_cast<const void*>(std::uintptr_t{0x10});

const nnplug_option_info kOptions[] = {{"threads", "0", "worker threads"}};
const nnplug_option_info kKeyless[] = {{nullptr, "0", "an option without a key"}};

const std::string kLongName(1000, 'x');

// The last bytes of a readable page, followed by a page that cannot be read.
const char* unterminated() {
    const long page = sysconf(_SC_PAGESIZE);
    void* pages = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return "";
    char* end = static_cast<char*>(pages) + page;
    for (char* at = end - 16; at < end; ++at) *at = 'x';
    mprotect(end, static_cast<size_t>(page), PROT_NONE);
    return end - 16;
}

// `length` bytes of 'x' and their NUL as the last bytes of a readable page, the next page
// unreadable: a check that reads one byte too far faults, one that stops one byte short refuses.
const char* at_page_end(size_t length) {
    const long page = sysconf(_SC_PAGESIZE);
    void* pages = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return "";
    char* end = static_cast<char*>(pages) + page;
    char* start = end - length - 1;
    for (char* at = start; at < end - 1; ++at) *at = 'x';
    end[-1] = '\0';
    mprotect(end, static_cast<size_t>(page), PROT_NONE);
    return start;
}

const char* null_soc(void*) {
    return nullptr;
}

nnplug_op_i op_with(int32_t kind, const char* name) {
    nnplug_op_i op = fake::kBackward;
    op.op = kind;
    op.name = name;
    return op;
}
const nnplug_op_i kNamelessOp = op_with(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, nullptr);
const nnplug_op_i kNegativeOp = op_with(-1, "aclnnBinaryCrossEntropyBackward");
const nnplug_op_i* const kNamelessOps[] = {&kNamelessOp};
const nnplug_op_i* const kNegativeOps[] = {&kNegativeOp};

const nnplug_device_i kStrangeDevice = [] {
    nnplug_device_i device = fake::kDevice;
    device.memory_kind = 7;
    return device;
}();

nnplug_plugin broken() {
    nnplug_plugin table = fake::table(kName);
    // One line per defect, so that the switch reads as the table it is.
    // clang-format off
    // Defects that leave the table as it is share a body: a clone by design.
    switch (kDefect) {  // NOLINT(bugprone-branch-clone)
        case Defect::null_ops: table.ops = nullptr; table.op_count = 1; break;
        case Defect::null_options: table.options = nullptr; table.option_count = 2; break;
        case Defect::huge_op_count: table.op_count = 4000; break;
        case Defect::huge_option_count: table.options = kOptions; table.option_count = SIZE_MAX; break;
        case Defect::null_name: table.name = nullptr; break;
        case Defect::long_name: table.name = kLongName.c_str(); break;
        case Defect::unterminated_name: table.name = unterminated(); break;
        case Defect::wild_name: table.name = static_cast<const char*>(kWild); break;
        case Defect::wild_table: break;
        case Defect::wild_ops: table.ops = static_cast<const nnplug_op_i* const*>(kWild); break;
        case Defect::wild_device: table.device = static_cast<const nnplug_device_i*>(kWild); break;
        case Defect::huge_struct_size: table.struct_size = UINT32_MAX; break;
        case Defect::null_option_key: table.options = kKeyless; table.option_count = 1; break;
        case Defect::null_op_name: table.ops = kNamelessOps; break;
        case Defect::negative_op: table.ops = kNegativeOps; break;
        case Defect::bad_memory_kind: table.device = &kStrangeDevice; break;
        case Defect::control_in_description: table.description = "first line\nsecond line"; break;
        case Defect::null_description: table.description = nullptr; break;
        case Defect::null_soc_name: table.soc_name = null_soc; break;
        case Defect::name_255: table.name = at_page_end(255); break;
        case Defect::name_256: table.name = at_page_end(256); break;
    }
    // clang-format on
    return table;
}

const nnplug_plugin kPlugin = broken();

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    if (kDefect == Defect::wild_table) return static_cast<const nnplug_plugin*>(kWild);
    return &kPlugin;
}
