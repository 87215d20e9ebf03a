// libFuzzer target: the YAML config file. The input is the file's text; it goes through
// the runtime's loader (load_runtime_config, what aclInit reads) and through the training
// example's reader of the same file (its `application:` section, the effective config it
// hands to aclInit, the run identity). Any outcome is fine except a crash, a sanitizer
// report or a loader that says "success" about a config it did not fill in.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
    const MemoryFile file(data, size);

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
        const train::TrainSettings settings = train::read_train_settings(document, {});
        (void)train::trajectory_settings(settings);
        (void)train::effective_backend(document);
        (void)train::effective_config_text(document, settings.data_path);
    } catch (const std::runtime_error&) {
        // refused with a message: fine
    }
    return 0;
}
