// nnplug_train: trains a binary classifier, a classifier of C classes or a regression (the
// config's `task`) with the loss and its gradient computed on the backend the config names:
// aclnnBinaryCrossEntropyWithLogits / ...WithLogitsBackward on the model's logits (loss:
// bce_with_logits) or aclnnBinaryCrossEntropy / ...Backward on its sigmoid outputs (bce);
// aclnnCrossEntropyLoss / ...Grad (cross_entropy) or aclnnNLLLoss / ...Backward (nll);
// aclnnMseLoss, aclnnL1Loss or aclnnSmoothL1Loss and their backwards (mse, l1, smooth_l1,
// huber).
#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "communicator.h"
#include "device_loss.h"
#include "rank_agreement.h"
#include "safe_file.h"
#include "train_settings.h"
#include "trainer.h"

namespace {

// The installed layout: bin/nnplug_train, share/nnplug/{configs,examples/data}; the build tree
// mirrors it.
std::filesystem::path share_folder() {
    std::error_code error;
    const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return {};
    return executable.parent_path().parent_path() / "share" / "nnplug";
}

// What the command line asks for.
struct CommandLine {
    std::string config_path;
    std::string backend;
    std::vector<std::string> overrides;
    std::string synthetic;
    std::string output_dir;
    std::string resume;
    bool resume_requested = false;
    int64_t interrupt_after_batches = 0;
};

void add_options(CLI::App& app, CommandLine& line, CLI::Option*& resume_option) {
    app.add_option("-c,--config", line.config_path,
                   "YAML config: runtime keys and the training settings under 'application:'")
        ->capture_default_str();
    app.add_option("-b,--backend", line.backend,
                   "backend to run the loss on (overrides the config's 'backend:')");
    app.add_option("-s,--set", line.overrides,
                   "override a config key, e.g. --set optimizer.lr=0.01 (repeatable)")
        ->type_name("KEY=VALUE");
    app.add_option("--synthetic", line.synthetic,
                   "train on a generated, noisy linearly separable set of N rows, D features")
        ->type_name("N,D");
    app.add_option("-o,--output", line.output_dir,
                   "output folder (overrides output.dir; default: train_output/<config name>-<backend>)");
    resume_option = app.add_option("--resume", line.resume,
                                   "continue from a checkpoint (default: <output>/checkpoint.bin)")
                        ->expected(0, 1)
                        ->type_name("[CHECKPOINT]");
    app.add_option("--interrupt-after-batches", line.interrupt_after_batches,
                   "stop as on SIGINT after this many batches (checkpoint and exit 130)")
        ->check(CLI::PositiveNumber);
}

// The config as the command line amends it.
train::ConfigDocument effective_document(const CommandLine& line) {
    train::ConfigDocument document = train::read_config_document(line.config_path);
    for (const auto& assignment : line.overrides) train::apply_override(document, assignment);
    if (!line.synthetic.empty()) {
        try {
            train::parse_synthetic_shape(line.synthetic);
        } catch (const std::invalid_argument& error) {
            throw std::runtime_error(fmt::format("--synthetic {}", error.what()));
        }
        train::apply_override(document, "data.synthetic=" + line.synthetic);
    }
    if (!line.output_dir.empty()) train::apply_override(document, "output.dir=" + line.output_dir);
    return document;
}

// The file aclInit reads: the user's own, so that the runtime's errors name the user's file
// and lines; when a --set (or the cores' share) changed a key the runtime reads, a private
// copy of the effective config (outside the run's folder, removed once the runtime has
// read it).
class RuntimeConfig {
public:
    RuntimeConfig(const train::ConfigDocument& document, const std::string& text) : path_(document.source) {
        if (!document.runtime_overridden) return;
        std::string name = (std::filesystem::temp_directory_path() / "nnplug_train-XXXXXX.yaml").string();
        const int fd = mkstemps(name.data(), 5);
        if (fd < 0) throw std::runtime_error("cannot create a temporary config file");
        ::close(fd);
        path_ = copy_ = name;
        train::write_file_atomically(copy_, text);
    }
    ~RuntimeConfig() { remove(); }
    RuntimeConfig(const RuntimeConfig&) = delete;
    RuntimeConfig& operator=(const RuntimeConfig&) = delete;
    const std::filesystem::path& path() const { return path_; }
    // Called by the destructor too: a copy that cannot be removed stays, nothing throws.
    void remove() {
        std::error_code ignored;
        if (!copy_.empty()) std::filesystem::remove(copy_, ignored);
        copy_.clear();
    }
    // A runtime message about the private copy, told about the user's file.
    std::string told(const std::string& message, const train::ConfigDocument& document) const {
        if (copy_.empty()) return message;
        // The copy's line numbers are not the user's: the file and the overrides are named.
        std::string text = message;
        const std::string copy = copy_.string(), shown = document.source.string() + " as this run amends it";
        for (size_t at = text.find(copy); at != std::string::npos; at = text.find(copy, at + shown.size())) {
            size_t end = at + copy.size();
            for (int field = 0; field < 2 && end < text.size() && text[end] == ':'; ++field) {
                const size_t digits = text.find_first_not_of("0123456789", end + 1);
                if (digits == end + 1) break;
                end = digits == std::string::npos ? text.size() : digits;
            }
            text.replace(at, end - at, shown);
        }
        return text;
    }

private:
    std::filesystem::path path_, copy_;
};

// The document aclInit reads: cpu_tbb's threads set to this process's share of the cores
// when the config leaves them to the backend (it would start one per core of the machine).
train::ConfigDocument runtime_document(const train::ConfigDocument& document, const std::string& backend,
                                       int threads) {
    const YAML::Node options = document.root["backends"] ? document.root["backends"][backend] : YAML::Node();
    const bool configured = options && options.IsMap() && options["threads"] &&
                            options["threads"].IsScalar() && options["threads"].Scalar() != "0";
    if (backend != "cpu_tbb" || configured ||
        threads >= static_cast<int>(std::thread::hardware_concurrency()))
        return document;
    train::ConfigDocument amended = document;
    amended.root = YAML::Clone(document.root);
    train::apply_override(amended, fmt::format("backends.cpu_tbb.threads={}", threads));
    return amended;
}

// Reads the config and trains between aclInit and aclFinalize; the run's folder is written
// only once the run has started (train::run_training).
int train_as_configured(const CommandLine& line, train::Communicator& communicator) {
    const train::ConfigDocument document = effective_document(line);
    // NNPLUG_BACKEND overrides the config's backend for aclInit (docs/runtime-api.md).
    if (!line.backend.empty()) setenv("NNPLUG_BACKEND", line.backend.c_str(), 1);

    train::RunRequest request;
    request.settings = train::read_train_settings(document, {});
    request.backend = train::effective_backend(document);
    if (!train::names_output_dir(document))
        request.settings.output_dir = train::default_output_dir(document, request.backend);
    request.config_text = train::effective_config_text(document, request.settings.data_path, request.backend,
                                                       request.settings.output_dir);
    // Each process's share of the cores, for its own threads and (below) the backend's,
    // unless the config sets them: ranks that each start a thread per core oversubscribe.
    const int threads = train::default_threads(communicator.local_size());
    if (request.settings.threads == 0) request.settings.threads = threads;
    request.interrupt_after_batches = line.interrupt_after_batches;
    if (line.resume_requested)
        request.resume_from = line.resume.empty() ? request.settings.output_dir / "checkpoint.bin"
                                                  : std::filesystem::path(line.resume);
    request.communicator = &communicator;
    // Before anything is written: a rank that would train otherwise stops the job here.
    // (Alone there is nothing to compare, and no reason to read the data or checkpoint
    // twice: their own readers check them, with their own messages.)
    if (communicator.size() > 1) {
        train::SettingLines lines = train::effective_settings(request.settings, request.backend,
                                                              communicator.size(), request.resume_from);
        const train::SettingLines runtime = train::runtime_settings(document);
        lines.insert(lines.end(), runtime.begin(), runtime.end());
        train::agree_on_settings(communicator, lines);
    }

    // One device per process, as CANN programs train data-parallel: the local rank's
    // (wrapping around when the backend has fewer devices, as cpu_tbb's one host).
    const train::ConfigDocument runtime = runtime_document(document, request.backend, threads);
    RuntimeConfig runtime_config(
        runtime, train::effective_config_text(runtime, request.settings.data_path, request.backend,
                                              request.settings.output_dir));
    std::optional<train::AclSession> session;
    try {
        session.emplace(runtime_config.path().c_str(), communicator.local_rank(), /*wrap_device=*/true);
    } catch (const std::runtime_error& error) {
        throw std::runtime_error(runtime_config.told(error.what(), document));
    }
    runtime_config.remove();
    train::install_stop_handlers();
    return train::run_training(request);
}

}  // namespace

namespace {
int run_main(int argc, char** argv) {
    CLI::App app{
        "Trains a binary or multi-class classifier or a regression (the config's task); the loss and its "
        "gradient run on the nnplug backend the config selects.",
        "nnplug_train"};
    CommandLine line;
    line.config_path = (share_folder() / "configs" / "train_cpu.yaml").string();
    CLI::Option* resume_option = nullptr;
    add_options(app, line, resume_option);
    // Under mpirun, every process joins the job before anything else (MPI may read the
    // command line); alone, nothing happens.
    std::optional<train::Communicator> communicator;
    try {
        communicator.emplace(&argc, &argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_train: %s\n", error.what());
        return 1;
    }
    const auto fail = [&](const std::string& message) {
        // In a data-parallel run one process's error stops the job: the others would wait
        // for it at the next combine.
        if (communicator->distributed()) {
            std::fprintf(stderr, "nnplug_train: %s: %s\n", communicator->name().c_str(),
                         nnplug::bounded_line(message).c_str());
            std::fflush(stderr);
            communicator->abort(1);
        }
        std::fprintf(stderr, "nnplug_train: %s\n", nnplug::bounded_line(message).c_str());
        return 1;
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        if (communicator->distributed() && error.get_exit_code() != 0) return fail(error.what());
        return communicator->rank() == 0 ? app.exit(error) : error.get_exit_code();
    }
    line.resume_requested = resume_option->count() > 0;
    try {
        return train_as_configured(line, *communicator);
    } catch (const train::SettingsMismatch& error) {
        // Every process knows: one message, and each leaves without stopping the others.
        if (communicator->rank() == 0)
            std::fprintf(stderr, "nnplug_train: %s\n", nnplug::bounded_line(error.what()).c_str());
        return 1;
    } catch (const std::bad_alloc&) {
        // The data set and the model name their own sizes; anything else ends here.
        return fail(
            "out of memory: an allocation of the run failed (std::bad_alloc); a smaller data set, "
            "model or batch needs less");
    } catch (const std::exception& error) {
        return fail(error.what());
    }
}
}  // namespace

// No exception leaves main: one that escapes the run (an allocation that fails, say) ends
// the program with its text.
int main(int argc, char** argv) {
    try {
        return run_main(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_train: %s\n", nnplug::bounded_line(error.what()).c_str());
    } catch (...) {
        std::fprintf(stderr, "nnplug_train: an unknown exception\n");
    }
    return 1;
}
