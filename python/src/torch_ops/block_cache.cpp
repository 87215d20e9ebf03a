#include "block_cache.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace nnplug::torch_ops {
namespace {

constexpr size_t kAlignment = 64;

// Freed blocks by size. Never destroyed: a tensor alive at exit still returns its block.
class BlockCache {
public:
    // A block of at least `bytes` (and less than twice as many), or null.
    void* take(size_t bytes, size_t& size) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = blocks_.lower_bound(bytes);
        if (found == blocks_.end() || found->first >= 2 * bytes) return nullptr;
        void* block = found->second;
        size = found->first;
        held_ -= size;
        blocks_.erase(found);
        return block;
    }

    // Keeps `block` for a later request, or frees it when the cache is full.
    void give(void* block, size_t size) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (held_ + size <= kMostCachedBytes) {
                blocks_.emplace(size, block);
                held_ += size;
                return;
            }
        }
        std::free(block);
    }

    size_t held() {
        std::lock_guard<std::mutex> lock(mutex_);
        return held_;
    }

private:
    std::mutex mutex_;
    std::multimap<size_t, void*> blocks_;
    size_t held_ = 0;
};

BlockCache& cache() {
    static BlockCache* const instance = new BlockCache();  // NOLINT(cppcoreguidelines-owning-memory)
    return *instance;
}

}  // namespace

at::Tensor empty_output(at::IntArrayRef shape, at::ScalarType dtype) {
    const auto options = at::TensorOptions(dtype);
    const size_t bytes = static_cast<size_t>(c10::multiply_integers(shape)) * c10::elementSize(dtype);
    if (bytes < kLeastCachedBytes) return at::empty(shape, options);
    size_t size = 0;
    void* block = cache().take(bytes, size);
    if (block == nullptr) {
        size = (bytes + 4095) / 4096 * 4096;
        block = std::aligned_alloc(kAlignment, size);
        if (block == nullptr) throw std::bad_alloc();
    }
    return at::from_blob(
        block, shape, [size](void* data) { cache().give(data, size); }, options);
}

size_t cached_bytes() {
    return cache().held();
}

}  // namespace nnplug::torch_ops
