#include "core_pool.h"

#include <atomic>

namespace nnplug::emu {

struct CorePool::Launch {
    const std::function<void(int)>* body;
    int block_dim;
    std::atomic<int> next{0};
    std::atomic<int> finished{0};
    std::mutex mutex;
    std::condition_variable done;
};

CorePool::CorePool(int host_threads) {
    for (int i = 1; i < host_threads; ++i) workers_.emplace_back([this] { work(); });
}

CorePool::~CorePool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    launch_ready_.notify_all();
    for (auto& worker : workers_) worker.join();
}

// Claims and runs one core of launch; false when none is left to claim.
bool CorePool::run_one(Launch& launch) {
    const int core = launch.next.fetch_add(1);
    if (core >= launch.block_dim) return false;
    (*launch.body)(core);
    if (launch.finished.fetch_add(1) + 1 == launch.block_dim) {
        std::lock_guard lock(launch.mutex);
        launch.done.notify_all();
    }
    return true;
}

void CorePool::run(int block_dim, const std::function<void(int)>& body) {
    auto launch = std::make_shared<Launch>();
    launch->body = &body;
    launch->block_dim = block_dim;
    if (block_dim > 1 && !workers_.empty()) {
        {
            std::lock_guard lock(mutex_);
            launches_.push_back(launch);
        }
        launch_ready_.notify_all();
    }
    while (run_one(*launch)) {
    }
    std::unique_lock lock(launch->mutex);
    launch->done.wait(lock, [&] { return launch->finished.load() == block_dim; });
}

void CorePool::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        launch_ready_.wait(lock, [&] { return stopping_ || !launches_.empty(); });
        if (stopping_) return;
        std::shared_ptr<Launch> launch = launches_.front();
        lock.unlock();
        const bool ran = run_one(*launch);
        lock.lock();
        // Every core claimed: retire the launch so the workers move on.
        if (!ran && !launches_.empty() && launches_.front() == launch) launches_.pop_front();
    }
}

}  // namespace nnplug::emu
