// What the fuzz targets that call aclnn ops through the public C API share: the input
// reader, the runtime on a backend the input picks (or NNPLUG_BACKEND), the plugins kept
// mapped, the message contract, and buffers with guard bytes whose every byte outside the
// outputs' view elements is checked unchanged after a call.
#pragma once

#include <acl/acl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nnplug::fuzz {

constexpr size_t kGuardBytes = 64;  // after each storage, never written

// Names the target in the messages of broken() and of a failed set-up.
void set_target_name(const char* name);
const char* target_name();

// Reports a broken contract on stderr and aborts, so that libFuzzer keeps the input.
[[noreturn]] void broken(const std::string& what);

// The input, front to back; past its end every read gives 0.
class Input {
public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
    size_t remaining() const { return size_ - at_; }
    int32_t i32() {
        uint32_t value = 0;
        for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(byte()) << (8 * i);
        return static_cast<int32_t>(value);
    }
    // The rest of the input, then a pattern (0x3e bytes: 0.19 in float32 and bfloat16, 1.56
    // in float16), so that computations also run on ordinary values.
    void fill(uint8_t* out, size_t count) {
        const size_t taken = std::min(count, size_ - at_);
        std::memcpy(out, data_ + at_, taken);
        at_ += taken;
        std::memset(out + taken, 0x3e, count - taken);
    }

private:
    const uint8_t* data_;
    size_t size_;
    size_t at_ = 0;
};

// The runtimes an input may pick: cpu_tbb, atlas_emu as Ascend910B, as Ascend910.
enum Backend { kCpuTbb = 0, kAtlas910B = 1, kAtlas910 = 2, kBackendCount = 3 };

// Initializes the runtime on `choice` (NNPLUG_BACKEND, when set, picks cpu_tbb or atlas_emu
// Ascend910B instead) unless it already runs there; returns the backend in use and sets
// `changed` when it had to switch.
Backend use_backend(int choice, bool& changed);
// aclFinalize of the runtime use_backend started, if any.
void finalize_backend();
// Keeps both backend plugins mapped for the whole run (see the definition for why).
void keep_plugins_loaded();

// Aborts unless aclGetRecentErrMsg holds a message after `call` failed.
void expect_message(const char* call);

// A storage the operands' data points into (device memory from aclrtMalloc, or host
// memory), followed by kGuardBytes guard bytes.
struct Buffer {
    bool device = true;
    uint8_t* data = nullptr;
    size_t storage_bytes = 0;     // what the tensor that made it may reach
    std::vector<uint8_t> before;  // storage and guard bytes before the run
    std::vector<bool> writable;   // bytes inside the outputs' view elements
};

Buffer make_buffer(bool device, size_t storage_bytes);
// Copies `before` into the buffer.
void upload(const Buffer& buffer);
// The buffer's bytes now, guard bytes included.
std::vector<uint8_t> download(const Buffer& buffer);
void free_buffer(Buffer& buffer);
// Marks the bytes of the view's elements (dims, strides, offset in elements) as writable.
void allow_writes(Buffer& buffer, size_t element_size, const std::vector<int64_t>& view,
                  const std::vector<int64_t>& strides, int64_t offset);
// Aborts, naming `api`, when a byte that is not writable changed in any buffer.
void expect_untouched(const std::vector<Buffer>& buffers, const std::string& api);

}  // namespace nnplug::fuzz
