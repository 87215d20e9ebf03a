// The emulated AI cores of a launch run on a few host threads: the pool's
// workers plus the stream thread that launched, which takes cores too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nnplug::emu {

class CorePool {
public:
    // host_threads counts the launching thread, so host_threads - 1 workers start.
    explicit CorePool(int host_threads);
    ~CorePool();
    CorePool(const CorePool&) = delete;
    CorePool& operator=(const CorePool&) = delete;

    // Runs body(core) for every core in [0, block_dim) and returns when all have run.
    void run(int block_dim, const std::function<void(int)>& body);

private:
    struct Launch;
    void work();
    static bool run_one(Launch& launch);

    std::mutex mutex_;
    std::condition_variable launch_ready_;
    std::deque<std::shared_ptr<Launch>> launches_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace nnplug::emu
