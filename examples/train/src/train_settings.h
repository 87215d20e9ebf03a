// The training settings: the `application:` section of the YAML config that also holds
// the runtime's keys, plus command-line overrides.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace train {

struct SyntheticShape {
    int64_t rows = 0;
    int64_t features = 0;
};

struct TrainSettings {
    // what is learnt: binary, multiclass or regression (task.h)
    std::string task = "binary";
    // data
    std::filesystem::path data_path;   // resolved to an existing file when loaded from a config
    std::string data_format = "auto";  // auto, sklearn (header "rows,features,name0,name1") or plain
    double test_fraction = 0.2;
    std::optional<SyntheticShape> synthetic;  // replaces data_path: a generated data set
    double synthetic_noise = 0.5;             // std of the Gaussian noise added to the true margin
    // model
    std::string model_kind = "logistic";  // logistic or mlp
    std::vector<int64_t> hidden;          // hidden layer sizes of the mlp (ReLU)
    // loss: bce_with_logits (the model emits logits; aclnnBinaryCrossEntropyWithLogits and its
    // Backward) or bce (a sigmoid output layer; aclnnBinaryCrossEntropy and its Backward)
    // The other tasks' losses (task.h): multiclass cross_entropy or nll, regression mse, l1,
    // smooth_l1 or huber. A config without `loss` takes its task's first.
    std::string loss = "bce_with_logits";
    double loss_beta = 1.0;  // smooth_l1's beta and huber's delta, in standardized target units
    // optimizer
    std::string optimizer = "adam";  // adam or sgd (with momentum)
    double learning_rate = 0.01;
    double momentum = 0.9;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    double weight_decay = 0.0;  // L2 on weights (not biases), added to the gradient
    // training
    int64_t epochs = 50;
    int64_t batch_size = 32;
    int64_t threads = 0;  // oneTBB threads for the host side of a step (0: the process's share of
                          // the cores, communicator.h default_threads);
                          // results are the same bytes for any count
    uint64_t seed = 42;
    std::string class_weights = "balanced";  // balanced, none, or "w0,w1"
    std::string pos_weight = "none";         // none, balanced, or a number > 0 (as text)
    // checkpoints and outputs
    int64_t checkpoint_every = 10;  // epochs; 0: only on SIGINT/SIGTERM
    std::filesystem::path output_dir = "train_output";
};

// A parsed config file: the whole document (runtime keys and `application:`).
struct ConfigDocument {
    std::filesystem::path source;
    YAML::Node root;
    std::map<std::string, std::string> overrides;  // application key -> the --set text that changed it
    bool runtime_overridden = false;               // a --set changed a key the runtime reads
};

// The largest config file read: a config is a page of settings (a huge one would only
// cost time and memory).
constexpr int64_t kLargestConfigBytes = int64_t{1} << 20;
// The most bytes a data set's float32 features may take (ROWS x FEATURES x 4), and the
// widest hidden layer: beyond any host's memory, so that nothing larger is ever attempted
// and no size computed from them can wrap around.
constexpr int64_t kLargestDataBytes = int64_t{1} << 46;
constexpr int64_t kLargestLayer = int64_t{1} << 31;
// The most host threads train.threads may ask for: cpu_tbb's own threads option's bound.
constexpr int64_t kLargestThreads = 4096;

// Reads a YAML file of one document: a regular file of at most kLargestConfigBytes; throws
// std::runtime_error naming the file on failure.
ConfigDocument read_config_document(const std::filesystem::path& path);

// Applies `key=value` overrides: keys of the runtime (backend, log_level, plugin_paths,
// backends.*) go to the top level, every other key to `application:`.
void apply_override(ConfigDocument& document, const std::string& assignment);

// Reads `application:` into settings; unknown keys and bad values throw with the key,
// the file position and a suggestion. `data.path` is resolved against the config's folder,
// then against data_folders.
TrainSettings read_train_settings(const ConfigDocument& document,
                                  const std::vector<std::filesystem::path>& data_folders);

// The backend the runtime will use: $NNPLUG_BACKEND, else the document's `backend`.
std::string effective_backend(const ConfigDocument& document);

// The config a run used, as the run's folder keeps it: the document after every --set, with
// the backend actually used, relative plugin paths made absolute (the copy lives away from
// the original file), `data.path` set to the data file found (empty: left as it is) and
// `output.dir` to the run's folder (empty backend or folder: left as they are). Rerunning
// from it repeats the run.
std::string effective_config_text(const ConfigDocument& document, const std::filesystem::path& data_path,
                                  const std::string& backend = {},
                                  const std::filesystem::path& output_dir = {});

// The run's folder when the config and the command line name none:
// train_output/<config file's stem>-<backend>.
std::filesystem::path default_output_dir(const ConfigDocument& document, const std::string& backend);

// True when the document (after overrides) sets application.output.dir.
bool names_output_dir(const ConfigDocument& document);

// The settings that decide the trajectory of a run, as sorted "key=value" lines; a
// checkpoint must match them to be resumed. Epochs, outputs and backend are left out.
std::vector<std::pair<std::string, std::string>> trajectory_settings(const TrainSettings& settings);

// Parses "N,D" for --synthetic.
SyntheticShape parse_synthetic_shape(const std::string& text);

// The class weights (w0, w1) for label counts of the training split.
std::pair<float, float> class_weight_values(const std::string& spec, int64_t negatives, int64_t positives);

// The positive-class weight for label counts of the training split: empty for "none", the
// number for a number > 0, negatives / positives for "balanced" (empty with one class only);
// throws std::invalid_argument for anything else.
std::optional<float> pos_weight_value(const std::string& spec, int64_t negatives, int64_t positives);

}  // namespace train
