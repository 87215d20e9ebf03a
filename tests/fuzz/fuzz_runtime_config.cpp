// libFuzzer target: the YAML config file and a `--set` override. The input is the file's
// text, then optionally a NUL byte and a KEY=VALUE override; the file goes through the
// runtime's loader (load_runtime_config, what aclInit reads) and through the training
// example's reader of the same file (its `application:` section with the override applied,
// as nnplug_train --set does, the effective config it hands to aclInit, the run identity). Any outcome is
// fine except a crash, a sanitizer report or a loader that says "success" about a config it did not fill in.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "runtime_config.h"
#include "train_settings.h"

namespace {

// The input as a file without touching the disk: a memfd, read through /proc/self/fd.
class MemoryFile {
public:
    MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("nnplug-fuzz-config.yaml", MFD_CLOEXEC)) {
        if (fd_ < 0) std::abort();
        size_t written = 0;
        while (written < size) {
            const ssize_t n = write(fd_, data + written, size - written);
            if (n <= 0) std::abort();
            written += static_cast<size_t>(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile() { close(fd_); }
    const std::string& path() const { return path_; }

private:
    int fd_;
    std::string path_;
};

[[noreturn]] void broken(const char* what) {
    std::fprintf(stderr, "fuzz_runtime_config: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto* nul = size > 0 ? static_cast<const uint8_t*>(std::memchr(data, 0, size)) : nullptr;
    const size_t file_size = nul != nullptr ? static_cast<size_t>(nul - data) : size;
    const MemoryFile file(data, file_size);
    const std::string override_text =
        nul != nullptr ? std::string(reinterpret_cast<const char*>(nul + 1), size - file_size - 1) : "";

    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    if (nnplug::load_runtime_config(file.path(), config, error)) {
        if (config.source != file.path() || config.backend.empty())
            broken("a loaded config lacks its source or backend");
    } else if (error.code == 0 || error.message.empty()) {
        broken("a refused config has no error code or message");
    }

    // The training example reads the same file: its own keys under `application:`.
    try {
        train::ConfigDocument document = train::read_config_document(file.path());
        if (nul != nullptr) {
            try {
                train::apply_override(document, override_text);
            } catch (const std::runtime_error&) {
                // a refused override: the file is still read, as without it
            }
        }
        const train::TrainSettings settings = train::read_train_settings(document, {});
        (void)train::trajectory_settings(settings);
        (void)train::effective_backend(document);
        (void)train::effective_config_text(document, settings.data_path);
    } catch (const std::runtime_error&) {
        // refused with a message: fine
    }
    return 0;
}
