// The shared parts of the aclnn fuzz targets (fuzz_acl_support.h).
#include "fuzz_acl_support.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace nnplug::fuzz {
namespace {

const char* g_name = "fuzz";
int g_active = -1;  // the Backend of the initialized runtime

// A config as a file in memory (memfd), kept open for the process's life.
std::string memory_file(const std::string& text) {
    const int fd = memfd_create("nnplug-fuzz.yaml", MFD_CLOEXEC);
    if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
    return "/proc/self/fd/" + std::to_string(fd);
}

// The config of each Backend.
const std::string& config_path(int choice) {
    static const std::vector<std::string> paths = [] {
        // Two cpu_tbb threads with small tasks, so a few thousand elements are split.
        const std::string common = "log_level: off\nbackends:\n  cpu_tbb: {threads: 2, grain: 1024}\n";
        return std::vector<std::string>{
            memory_file("backend: cpu_tbb\n" + common),
            memory_file("backend: atlas_emu\n" + common +
                        "  atlas_emu: {soc: Ascend910B, memory_mib: 256, host_threads: 2}\n"),
            memory_file("backend: atlas_emu\n" + common +
                        "  atlas_emu: {soc: Ascend910, memory_mib: 256, host_threads: 2}\n"),
        };
    }();
    return paths[static_cast<size_t>(choice)];
}

}  // namespace

void set_target_name(const char* name) {
    g_name = name;
}

const char* target_name() {
    return g_name;
}

void broken(const std::string& what) {
    std::fprintf(stderr, "%s: contract broken: %s\n", g_name, what.c_str());
    std::abort();
}

Backend use_backend(int choice, bool& changed) {
    const char* forced = std::getenv("NNPLUG_BACKEND");
    if (forced != nullptr && *forced != '\0')
        choice = std::string(forced) == "atlas_emu" ? kAtlas910B : kCpuTbb;
    changed = choice != g_active;
    if (!changed) return static_cast<Backend>(choice);
    finalize_backend();
    if (aclInit(config_path(choice).c_str()) != ACL_SUCCESS) {
        std::fprintf(stderr, "%s: aclInit of backend %d failed: %s\n", g_name, choice, aclGetRecentErrMsg());
        std::abort();
    }
    g_active = choice;
    return static_cast<Backend>(choice);
}

void finalize_backend() {
    if (g_active >= 0) aclFinalize();
    g_active = -1;
}

// The backends stay mapped for the whole run: aclFinalize unloads the plugin, but libFuzzer
// keeps reading the coverage counters of every instrumented library it has seen, so one
// unmapped by dlclose would crash the fuzzer itself. A reference held here (and NODELETE)
// keeps each plugin loaded; libnnplug loads the same files, from its own folder.
void keep_plugins_loaded() {
    Dl_info library{};
    if (dladdr(reinterpret_cast<void*>(&aclInit), &library) == 0 || library.dli_fname == nullptr)
        std::abort();
    const std::filesystem::path folder =
        std::filesystem::canonical(library.dli_fname).parent_path() / "nnplug" / "plugins";
    for (const char* name : {"libnnplug_cpu_tbb.so", "libnnplug_atlas_emu.so"}) {
        if (dlopen((folder / name).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == nullptr) {
            std::fprintf(stderr, "%s: cannot load %s: %s\n", g_name, (folder / name).c_str(), dlerror());
            std::abort();
        }
    }
}

void expect_message(const char* call) {
    const char* message = aclGetRecentErrMsg();
    if (message == nullptr || *message == '\0') broken(std::string(call) + " failed without a message");
}

Buffer make_buffer(bool device, size_t storage_bytes) {
    Buffer buffer;
    buffer.device = device;
    buffer.storage_bytes = storage_bytes;
    const size_t total = storage_bytes + kGuardBytes;
    void* pointer = nullptr;
    if (device) {
        if (aclrtMalloc(&pointer, total, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            broken("aclrtMalloc failed");
    } else {
        pointer = std::malloc(total);
    }
    buffer.data = static_cast<uint8_t*>(pointer);
    buffer.before.resize(total);
    buffer.writable.assign(total, false);
    return buffer;
}

void upload(const Buffer& buffer) {
    if (!buffer.device) {
        std::memcpy(buffer.data, buffer.before.data(), buffer.before.size());
    } else if (aclrtMemcpy(buffer.data, buffer.before.size(), buffer.before.data(), buffer.before.size(),
                           ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        broken("aclrtMemcpy to the device failed");
    }
}

std::vector<uint8_t> download(const Buffer& buffer) {
    std::vector<uint8_t> after(buffer.before.size());
    if (!buffer.device) {
        std::memcpy(after.data(), buffer.data, after.size());
    } else if (aclrtMemcpy(after.data(), after.size(), buffer.data, after.size(),
                           ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        broken("aclrtMemcpy from the device failed");
    }
    return after;
}

void free_buffer(Buffer& buffer) {
    if (buffer.device)
        aclrtFree(buffer.data);
    else
        std::free(buffer.data);
    buffer.data = nullptr;
}

void allow_writes(Buffer& buffer, size_t element_size, const std::vector<int64_t>& view,
                  const std::vector<int64_t>& strides, int64_t offset) {
    int64_t count = 1;
    for (int64_t dim : view) count *= dim;  // bounded: the tensor was made and has storage
    std::vector<int64_t> index(view.size(), 0);
    for (int64_t n = 0; n < count; ++n) {
        int64_t element = offset;
        for (size_t k = 0; k < index.size(); ++k) element += index[k] * strides[k];
        for (size_t b = 0; b < element_size; ++b) {
            const size_t at = static_cast<size_t>(element) * element_size + b;
            if (at < buffer.writable.size()) buffer.writable[at] = true;
        }
        for (size_t k = index.size(); k-- > 0;) {
            if (++index[k] < view[k]) break;
            index[k] = 0;
        }
    }
}

void expect_untouched(const std::vector<Buffer>& buffers, const std::string& api) {
    for (size_t b = 0; b < buffers.size(); ++b) {
        const Buffer& buffer = buffers[b];
        const std::vector<uint8_t> after = download(buffer);
        for (size_t i = 0; i < after.size(); ++i)
            if (after[i] != buffer.before[i] && !buffer.writable[i])
                broken(api + " wrote byte " + std::to_string(i) + " of buffer " + std::to_string(b) + " (" +
                       std::to_string(buffer.storage_bytes) + " storage bytes" +
                       (i >= buffer.storage_bytes ? ", in the guard after the storage"
                                                  : ", outside the output's view") +
                       ")");
    }
}

}  // namespace nnplug::fuzz
