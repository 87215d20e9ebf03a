#include "communicator.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#ifdef NNPLUG_TRAIN_WITH_MPI
#include <mpi.h>
#endif

namespace train {
namespace {

// The launcher's size of the job, from its environment: Open MPI, then PMI and PMIx.
int launcher_size() {
    for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
        if (const char* value = std::getenv(variable)) return std::atoi(value);
    return 0;
}

bool started_by_launcher() {
    return launcher_size() > 0 || std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr;
}

#ifdef NNPLUG_TRAIN_WITH_MPI
void check_mpi(int status, const char* call) {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw std::runtime_error(fmt::format("{} failed: {}", call, text));
}
#endif

}  // namespace

int default_threads(int local_processes) {
    const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const int usable = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : machine;
    if (usable < machine) return std::max(1, usable);  // bound by the launcher
    return std::max(1, machine / std::max(1, local_processes));
}

bool built_with_mpi() {
#ifdef NNPLUG_TRAIN_WITH_MPI
    return true;
#else
    return false;
#endif
}

Communicator::Communicator(int* argc, char*** argv) {
#ifdef NNPLUG_TRAIN_WITH_MPI
    if (!started_by_launcher()) return;
    // A rank waiting in the combine yields its core instead of spinning on it: the cores
    // are shared with the ranks' own oneTBB and backend threads (and, on a machine with
    // fewer cores than ranks, with each other), and a spinning rank slowed a 2-rank run on
    // 2 cores 6 times. Open MPI reads this at MPI_Init; a value the user set is kept.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    initialized_ = true;
    // A failing call returns its error here instead of aborting inside MPI, so the message
    // names the rank (a peer that died makes the job stop through mpirun).
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
#else
    (void)argc;
    (void)argv;
    if (started_by_launcher() && launcher_size() > 1)
        throw std::runtime_error(fmt::format(
            "started by mpirun with {} processes, but this nnplug_train was built without MPI (install "
            "libopenmpi-dev and rebuild)",
            launcher_size()));
#endif
}

Communicator::~Communicator() {
#ifdef NNPLUG_TRAIN_WITH_MPI
    if (initialized_) MPI_Finalize();
#endif
}

std::string Communicator::name() const {
    return size_ > 1 ? fmt::format("rank {} of {}", rank_, size_) : "";
}

void Communicator::all_gather(const void* send, int64_t send_bytes, void* receive,
                              const std::vector<int64_t>& counts) {
    if (size_ == 1) {
        if (send_bytes > 0) std::memmove(receive, send, static_cast<size_t>(send_bytes));
        return;
    }
#ifdef NNPLUG_TRAIN_WITH_MPI
    const auto start = std::chrono::steady_clock::now();
    counts_.resize(static_cast<size_t>(size_));
    displacements_.resize(static_cast<size_t>(size_));
    int64_t offset = 0;
    for (int r = 0; r < size_; ++r) {
        if (counts[static_cast<size_t>(r)] > INT_MAX || offset > INT_MAX)
            throw std::runtime_error("a combine of more than 2 GiB per step");
        counts_[static_cast<size_t>(r)] = static_cast<int>(counts[static_cast<size_t>(r)]);
        displacements_[static_cast<size_t>(r)] = static_cast<int>(offset);
        offset += counts[static_cast<size_t>(r)];
    }
    check_mpi(MPI_Allgatherv(send, static_cast<int>(send_bytes), MPI_BYTE, receive, counts_.data(),
                             displacements_.data(), MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Allgatherv");
    combine_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#else
    (void)send;
    (void)receive;
    (void)counts;
#endif
}

void Communicator::abort(int code) {
#ifdef NNPLUG_TRAIN_WITH_MPI
    if (initialized_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    std::exit(code);
}

}  // namespace train
