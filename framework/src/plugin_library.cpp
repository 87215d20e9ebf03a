#include "plugin_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>
#include <vector>

namespace nnplug {
namespace {

// The first members every version of the table keeps: what we read before trusting more.
struct TableHeader {
    uint32_t abi_version;
    uint32_t struct_size;
};

// The size of a table up to and including member `last`: the least version 2 needs.
template <typename Table, typename Member>
uint32_t size_through(Member Table::*last) {
    const Table probe{};
    const auto* base = reinterpret_cast<const char*>(&probe);
    return static_cast<uint32_t>(reinterpret_cast<const char*>(&(probe.*last)) - base + sizeof(Member));
}

uintptr_t page_size() {
    static const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<uintptr_t>(size) : 4096;
}

// Tells whether memory can be read without a fault, so that a table pointing anywhere is
// refused instead of crashing the host. The kernel reads one byte of each page for us and
// answers EFAULT for a page that is not mapped readable: process_vm_readv on ourselves,
// or, where a seccomp filter or an old kernel refuses that call, a write into a pipe
// (which memory checkers such as valgrind report as a bad access, hence the first choice).
class MemoryProbe {
public:
    MemoryProbe() {
        const char here = 0;
        if (read_through_kernel(reinterpret_cast<uintptr_t>(&here))) return;
        if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
        use_pipe_ = true;
    }
    ~MemoryProbe() {
        for (const int fd : pipe_)
            if (fd >= 0) close(fd);
    }
    MemoryProbe(const MemoryProbe&) = delete;
    MemoryProbe& operator=(const MemoryProbe&) = delete;

    bool ready() const { return !use_pipe_ || pipe_[1] >= 0; }

    bool readable(const void* address, size_t bytes) const {
        if (bytes == 0) return true;
        const auto start = reinterpret_cast<uintptr_t>(address);
        if (start == 0 || bytes - 1 > UINTPTR_MAX - start) return false;
        const uintptr_t last = start + (bytes - 1);
        for (uintptr_t at = start;; at = (at / page_size() + 1) * page_size()) {
            if (!(use_pipe_ ? read_through_pipe(at) : read_through_kernel(at))) return false;
            if (at / page_size() == last / page_size()) return true;
        }
    }

private:
    static bool read_through_kernel(uintptr_t address) {
        char sink;
        iovec local{&sink, 1};
        iovec remote{reinterpret_cast<void*>(address), 1};
        return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
    }

    bool read_through_pipe(uintptr_t address) const {
        ssize_t written;
        do {
            written = write(pipe_[1], reinterpret_cast<const void*>(address), 1);
        } while (written < 0 && errno == EINTR);
        if (written != 1) return false;  // EFAULT; any other failure also refuses rather than risk it
        char sink;
        while (read(pipe_[0], &sink, 1) < 0 && errno == EINTR) {
        }
        return true;
    }

    bool use_pipe_ = false;
    int pipe_[2] = {-1, -1};
};

// Checks a plugin table member by member, before anything else reads it. Each check
// reads only what the checks before it have shown to be readable; the first fault found
// is kept as the reason, worded to follow "its plugin table ".
class TableCheck {
public:
    explicit TableCheck(const MemoryProbe& probe) : probe_(probe) {}

    bool plugin(const nnplug_plugin& table) {
        return text(table.name, "name", kMaxPluginNameBytes, true) &&
               text(table.description, "description", kMaxPluginTextBytes, false) && functions(table) &&
               options(table) && device(table.device) && ops(table);
    }

    const std::string& reason() const { return reason_; }

private:
    bool fault(std::string reason) {
        reason_ = std::move(reason);
        return false;
    }

    bool memory(const void* address, size_t bytes, size_t alignment, const std::string& member) {
        const auto at = reinterpret_cast<uintptr_t>(address);
        if (at % alignment != 0)
            return fault(fmt::format("has '{}' at a misaligned address {:#x}", member, at));
        if (!probe_.readable(address, bytes))
            return fault(fmt::format("has '{}' at {:#x}, which is not readable memory", member, at));
        return true;
    }

    // A string of 1 to limit bytes (when present), NUL-terminated within them, readable,
    // with no control character, so that every message stays on one line.
    bool text(const char* value, const std::string& member, size_t limit, bool required) {
        if (value == nullptr) return required ? fault(fmt::format("has a null '{}'", member)) : true;
        size_t length = 0;
        for (bool found = false; !found;) {
            const char* at = value + length;
            if (!probe_.readable(at, 1)) {
                if (length == 0)
                    return fault(fmt::format("has '{}' at {:#x}, which is not readable memory", member,
                                             reinterpret_cast<uintptr_t>(value)));
                return fault(
                    fmt::format("has a '{}' that runs into unreadable memory before its NUL", member));
            }
            const size_t rest_of_page = page_size() - reinterpret_cast<uintptr_t>(at) % page_size();
            const size_t span = std::min(rest_of_page, limit + 1 - length);
            if (const void* nul = std::memchr(at, '\0', span)) {
                length += static_cast<size_t>(static_cast<const char*>(nul) - at);
                found = true;
            } else {
                length += span;
                if (length > limit)
                    return fault(fmt::format(
                        "has a '{}' that is not a NUL-terminated string of at most {} bytes", member, limit));
            }
        }
        if (length == 0 && required) return fault(fmt::format("has an empty '{}'", member));
        const std::string_view view(value, length);
        if (std::any_of(view.begin(), view.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
            return fault(fmt::format("has a control character in '{}'", member));
        return true;
    }

    bool functions(const nnplug_plugin& table) {
        const std::pair<const void*, const char*> required[] = {
            {reinterpret_cast<const void*>(table.create), "create"},
            {reinterpret_cast<const void*>(table.destroy), "destroy"},
            {reinterpret_cast<const void*>(table.soc_name), "soc_name"},
            {reinterpret_cast<const void*>(table.dtype_mask), "dtype_mask"},
            {reinterpret_cast<const void*>(table.last_error), "last_error"},
            {table.device, "device"},
        };
        return present(required);
    }

    template <size_t N>
    bool present(const std::pair<const void*, const char*> (&members)[N]) {
        for (const auto& [pointer, name] : members)
            if (pointer == nullptr) return fault(fmt::format("has no '{}'", name));
        return true;
    }

    // The struct_size of a nested table: at least version 2's layout, at most the limit.
    bool table_size(const std::string& what, uint32_t declared, uint32_t least) {
        if (declared < least)
            return fault(
                fmt::format("has {} of {} bytes, smaller than version 2's {}", what, declared, least));
        if (declared > kMaxPluginTableBytes)
            return fault(fmt::format("has {} of {} bytes, more than the {} a table may have", what, declared,
                                     kMaxPluginTableBytes));
        return true;
    }

    bool options(const nnplug_plugin& table) {
        const size_t count = table.option_count;
        if (count > kMaxPluginOptions)
            return fault(
                fmt::format("declares {} options, more than the {} allowed", count, kMaxPluginOptions));
        if (count == 0) return true;
        if (table.options == nullptr)
            return fault(fmt::format("declares {} options but has a null 'options'", count));
        if (!memory(table.options, count * sizeof(nnplug_option_info), alignof(nnplug_option_info),
                    "options"))
            return false;
        std::set<std::string_view> keys;
        for (size_t i = 0; i < count; ++i) {
            const nnplug_option_info& option = table.options[i];
            const std::string member = fmt::format("options[{}]", i);
            if (option.key == nullptr) return fault(fmt::format("has an option without a key ({})", member));
            if (!text(option.key, member + ".key", kMaxPluginNameBytes, true) ||
                !text(option.default_value, member + ".default_value", kMaxPluginTextBytes, false) ||
                !text(option.description, member + ".description", kMaxPluginTextBytes, false))
                return false;
            if (!keys.insert(option.key).second)
                return fault(fmt::format("declares option '{}' twice", option.key));
        }
        return true;
    }

    bool device(const nnplug_device_i* device) {
        if (!memory(device, sizeof(uint32_t), alignof(nnplug_device_i), "device")) return false;
        const uint32_t least = size_through(&nnplug_device_i::stream_synchronize);
        if (!table_size("a device table", device->struct_size, least) ||
            !memory(device, std::min<size_t>(device->struct_size, sizeof(nnplug_device_i)), 1, "device"))
            return false;
        if (device->memory_kind != NNPLUG_MEMORY_HOST && device->memory_kind != NNPLUG_MEMORY_DEVICE)
            return fault(
                fmt::format("has a device table whose memory_kind {} is neither {} (host) nor {} (device)",
                            device->memory_kind, static_cast<int>(NNPLUG_MEMORY_HOST),
                            static_cast<int>(NNPLUG_MEMORY_DEVICE)));
        const std::pair<const void*, const char*> required[] = {
            {reinterpret_cast<const void*>(device->malloc), "device.malloc"},
            {reinterpret_cast<const void*>(device->free), "device.free"},
            {reinterpret_cast<const void*>(device->memcpy), "device.memcpy"},
            {reinterpret_cast<const void*>(device->memset), "device.memset"},
            {reinterpret_cast<const void*>(device->stream_create), "device.stream_create"},
            {reinterpret_cast<const void*>(device->stream_destroy), "device.stream_destroy"},
            {reinterpret_cast<const void*>(device->stream_synchronize), "device.stream_synchronize"},
        };
        return present(required);
    }

    bool ops(const nnplug_plugin& table) {
        const size_t count = table.op_count;
        if (count > kMaxPluginOps)
            return fault(fmt::format("declares {} ops, more than the {} allowed", count, kMaxPluginOps));
        if (count == 0) return true;
        if (table.ops == nullptr) return fault(fmt::format("declares {} ops but has a null 'ops'", count));
        if (!memory(table.ops, count * sizeof(const nnplug_op_i*), alignof(const nnplug_op_i*), "ops"))
            return false;
        std::set<int32_t> listed;
        for (size_t i = 0; i < count; ++i) {
            const nnplug_op_i* op = table.ops[i];
            const std::string member = fmt::format("ops[{}]", i);
            if (op == nullptr) return fault(fmt::format("has a null {}", member));
            if (!memory(op, sizeof(uint32_t), alignof(nnplug_op_i), member) ||
                !table_size(member, op->struct_size, size_through(&nnplug_op_i::release)) ||
                !memory(op, std::min<size_t>(op->struct_size, sizeof(nnplug_op_i)), 1, member) ||
                !text(op->name, member + ".name", kMaxPluginNameBytes, true))
                return false;
            if (op->op < 0)
                return fault(
                    fmt::format("has {} ({}) of op kind {}, which is negative", member, op->name, op->op));
            if (op->prepare == nullptr || op->launch == nullptr)
                return fault(fmt::format("has no prepare or launch in {} ({})", member, op->name));
            if (!listed.insert(op->op).second)
                return fault(fmt::format("lists op {} ({}) twice", op->op, op->name));
        }
        return true;
    }

    const MemoryProbe& probe_;
    std::string reason_;
};

// Whether the library mapped at address is the file open as fd (same device and inode),
// read from /proc/self/maps.
bool mapped_from(const void* address, int fd) {
    struct stat file {};
    if (fstat(fd, &file) != 0) return false;
    std::ifstream maps("/proc/self/maps");
    const auto at = reinterpret_cast<uintptr_t>(address);
    std::string line;
    while (std::getline(maps, line)) {
        uintptr_t start = 0, end = 0;
        unsigned major = 0, minor = 0;
        unsigned long long inode = 0;
        if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %*s %*s %x:%x %llu", &start, &end, &major,
                        &minor, &inode) != 5)
            continue;
        if (at >= start && at < end) return inode == file.st_ino && makedev(major, minor) == file.st_dev;
    }
    return false;
}

// A /proc/self/fd/N name for the file open as fd that no other loaded library answers to:
// the dynamic loader matches a new name against the names of loaded libraries before it
// looks at the file, so the name of a plugin loaded earlier through a descriptor with the
// same number would give back that plugin. fd is duplicated to another number until the
// name is free or names this very file; the duplicates land in `held`, closed by the
// caller after loading.
std::string unused_fd_name(int fd, std::vector<int>& held) {
    constexpr int kTries = 64;
    const int original = fd;
    for (int tries = 0;; ++tries) {
        std::string name = fmt::format("/proc/self/fd/{}", fd);
        void* loaded = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (loaded == nullptr) return name;
        link_map* map = nullptr;
        const bool same =
            dlinfo(loaded, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && mapped_from(map->l_ld, original);
        dlclose(loaded);
        if (same || tries == kTries) return name;
        const int next = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        if (next < 0) return name;
        held.push_back(next);
        fd = next;
    }
}

// Whether the file open as fd is on a file system mounted noexec: the loader would fail to
// map it with EBADF ("Bad file descriptor"), which names nothing.
bool on_noexec_file_system(int fd) {
    struct statvfs mount {};
    return fstatvfs(fd, &mount) == 0 && (mount.f_flag & ST_NOEXEC) != 0;
}

}  // namespace

const char* soc_name_of(const nnplug_plugin& plugin, void* context) {
    const char* name = plugin.soc_name(context);
    return name != nullptr ? name : "unknown";
}

std::optional<PluginLibrary> PluginLibrary::load(int fd, const std::filesystem::path& file,
                                                 std::string& error) {
    const MemoryProbe probe;
    if (!probe.ready()) {
        error = fmt::format("'{}' cannot be checked: no pipe to probe its table with ({})", file.string(),
                            std::strerror(errno));
        return std::nullopt;
    }
    if (on_noexec_file_system(fd)) {
        error = fmt::format(
            "'{}' cannot be loaded: its file system is mounted noexec, which does not allow "
            "executing it",
            file.string());
        return std::nullopt;
    }
    boost::dll::shared_library library;
    std::vector<int> held;
    try {
        // The very file the caller opened and checked: its name is never resolved again.
        library.load(unused_fd_name(fd, held),
                     boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& exception) {
        error = fmt::format("'{}' is not a loadable plugin: {}", file.string(), exception.what());
    }
    for (const int each : held) close(each);
    if (!library.is_loaded()) return std::nullopt;
    if (!library.has(NNPLUG_PLUGIN_ENTRY_NAME)) {
        error = fmt::format("'{}' is not an nnplug plugin: it does not export '{}'", file.string(),
                            NNPLUG_PLUGIN_ENTRY_NAME);
        return std::nullopt;
    }
    const auto entry = library.get<const nnplug_plugin*()>(NNPLUG_PLUGIN_ENTRY_NAME);
    const nnplug_plugin* table = nullptr;
    try {
        table = entry();
    } catch (...) {
        error = fmt::format("'{}': its entry symbol threw an exception", file.string());
        return std::nullopt;
    }
    if (table == nullptr) {
        error = fmt::format("'{}': its entry symbol returned no table", file.string());
        return std::nullopt;
    }
    if (reinterpret_cast<uintptr_t>(table) % alignof(nnplug_plugin) != 0 ||
        !probe.readable(table, sizeof(TableHeader))) {
        error = fmt::format("'{}': its entry symbol returned {:#x}, which is not a readable table",
                            file.string(), reinterpret_cast<uintptr_t>(table));
        return std::nullopt;
    }
    TableHeader header;
    std::memcpy(&header, table, sizeof header);
    if (header.abi_version != NNPLUG_PLUGIN_ABI_VERSION) {
        error = fmt::format(
            "'{}' was built for plugin ABI version {}, this runtime speaks version {}: rebuild it "
            "against this nnplug's SDK",
            file.string(), header.abi_version, NNPLUG_PLUGIN_ABI_VERSION);
        return std::nullopt;
    }
    // Read as "at least this big": a newer plugin may append members this runtime ignores.
    const uint32_t least = size_through(&nnplug_plugin::op_count);
    if (header.struct_size < least) {
        error = fmt::format("'{}' declares a plugin table of {} bytes, smaller than version {}'s {}",
                            file.string(), header.struct_size, NNPLUG_PLUGIN_ABI_VERSION, least);
        return std::nullopt;
    }
    if (header.struct_size > kMaxPluginTableBytes) {
        error = fmt::format("'{}' declares a plugin table of {} bytes, more than the {} a table may have",
                            file.string(), header.struct_size, kMaxPluginTableBytes);
        return std::nullopt;
    }
    if (!probe.readable(table, std::min<size_t>(header.struct_size, sizeof(nnplug_plugin)))) {
        error = fmt::format("'{}': its plugin table of {} bytes at {:#x} is not readable memory",
                            file.string(), header.struct_size, reinterpret_cast<uintptr_t>(table));
        return std::nullopt;
    }
    TableCheck check(probe);
    if (!check.plugin(*table)) {
        error = fmt::format("'{}': its plugin table {}", file.string(), check.reason());
        return std::nullopt;
    }
    return PluginLibrary(std::move(library), table, file);
}

}  // namespace nnplug
