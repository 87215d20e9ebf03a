#include "train_settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nnplug/escaped_text.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "safe_file.h"
#include "task.h"

namespace train {
namespace {

const std::vector<std::string> kRuntimeKeys = {
    "backend", "ops", "fallback", "log_level", "plugin_paths", "allow_insecure_plugins", "backends"};

// Where key's value came from: the --set that gave it (or gave a key it lies under: a --set
// whose value is a mapping makes keys below its own), else file:line:column. A node made
// from a --set value has marks in that value's text, never in the file.
std::string position(const ConfigDocument& document, const std::string& key, const YAML::Node& node) {
    for (std::string prefix = key;;) {
        const auto override_text = document.overrides.find(prefix);
        if (override_text != document.overrides.end())
            return fmt::format("--set {}", nnplug::escaped(override_text->second));
        const size_t dot = prefix.rfind('.');
        if (dot == std::string::npos) break;
        prefix.resize(dot);
    }
    return fmt::format("{}:{}:{}", document.source.string(), node.Mark().line + 1, node.Mark().column + 1);
}

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string did_you_mean(const std::string& key, const std::vector<std::string>& known) {
    std::string best;
    size_t best_distance = 4;  // suggest only near misses
    for (const auto& candidate : known) {
        const size_t distance = edit_distance(key, candidate);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

// Leaves of the application mapping, by dotted key. A mapping `levels` deep is a leaf
// whatever it holds: no key is that deep (the reader names it as unknown), and an alias can
// make a mapping hold itself (`application: &a {model: *a}`), which would never end. A key
// twice in one mapping is refused, as the runtime refuses it in its own sections.
void flatten(const ConfigDocument& document, const YAML::Node& node, const std::string& prefix, size_t levels,
             std::map<std::string, YAML::Node>& leaves) {
    if (node.IsMap() && levels > 0) {
        std::set<std::string> seen;
        for (const auto& entry : node) {
            const std::string key =
                prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
            if (!seen.insert(entry.first.Scalar()).second)
                throw std::runtime_error(fmt::format("{}: key 'application.{}' appears twice",
                                                     position(document, key, entry.first), key));
            flatten(document, entry.second, key, levels - 1, leaves);
        }
    } else {
        leaves[prefix] = node;
    }
}

struct KeyContext {
    const ConfigDocument& document;
    const std::string& key;
    const YAML::Node& node;

    [[noreturn]] void fail(const std::string& expected) const {
        const std::string shown =
            node.IsScalar() ? node.Scalar() : std::string(node.IsSequence() ? "a list" : "a mapping");
        throw std::runtime_error(fmt::format("{}: key '{}' has value '{}'; expected {}",
                                             position(document, key, node), key, shown, expected));
    }
    double number(double minimum, bool exclusive_minimum, double maximum = 1e300) const {
        double value = 0;
        try {
            if (!node.IsScalar()) fail("a number");
            value = node.as<double>();
        } catch (const YAML::Exception&) {
            fail("a number");
        }
        if (value < minimum || (exclusive_minimum && value == minimum) || value > maximum)
            fail(fmt::format("a number {} {}{}", exclusive_minimum ? ">" : ">=", minimum,
                             maximum < 1e300 ? fmt::format(" and <= {}", maximum) : ""));
        return value;
    }
    int64_t whole(int64_t minimum, int64_t maximum = INT64_MAX) const {
        const std::string expected = maximum == INT64_MAX
                                         ? fmt::format("a whole number >= {}", minimum)
                                         : fmt::format("a whole number from {} to {}", minimum, maximum);
        int64_t value = 0;
        try {
            if (!node.IsScalar()) fail(expected);
            value = node.as<int64_t>();
        } catch (const YAML::Exception&) {
            fail(expected);
        }
        if (value < minimum || value > maximum) fail(expected);
        return value;
    }
    std::string text() const {
        if (!node.IsScalar()) fail("a single value");
        return node.Scalar();
    }
    std::string choice(const std::vector<std::string>& choices) const {
        std::string value = node.IsScalar() ? node.Scalar() : "";
        if (std::find(choices.begin(), choices.end(), value) == choices.end())
            fail(fmt::format("one of {}{}", fmt::join(choices, ", "), did_you_mean(value, choices)));
        return value;
    }
};

using KeyReader = std::function<void(const KeyContext&, TrainSettings&)>;

void read_synthetic(const KeyContext& c, TrainSettings& s) {
    if (c.node.IsNull() || (c.node.IsScalar() && c.node.Scalar().empty())) {
        s.synthetic.reset();
        return;
    }
    try {
        s.synthetic = parse_synthetic_shape(c.text());
    } catch (const std::invalid_argument&) {
        c.fail(
            fmt::format("'ROWS,FEATURES' with ROWS >= 10, FEATURES >= 1 and ROWS x FEATURES x 4 bytes at "
                        "most {}",
                        kLargestDataBytes));
    }
}

void read_hidden(const KeyContext& c, TrainSettings& s) {
    s.hidden.clear();
    if (c.node.IsNull()) return;
    if (!c.node.IsSequence()) c.fail("a list of layer sizes, e.g. [32, 16]");
    for (const auto& item : c.node) {
        int64_t size = 0;
        try {
            size = item.as<int64_t>();
        } catch (const YAML::Exception&) {
            c.fail(fmt::format("a list of whole numbers from 1 to {}", kLargestLayer));
        }
        if (size < 1 || size > kLargestLayer)
            c.fail(fmt::format("a list of whole numbers from 1 to {}", kLargestLayer));
        s.hidden.push_back(size);
    }
}

void read_class_weights(const KeyContext& c, TrainSettings& s) {
    std::string spec;
    if (c.node.IsSequence() && c.node.size() == 2)
        spec = fmt::format("{},{}", c.node[0].Scalar(), c.node[1].Scalar());
    else if (c.node.IsScalar())
        spec = c.node.Scalar();
    try {
        class_weight_values(spec, 1, 1);
    } catch (const std::invalid_argument&) {
        c.fail("balanced, none, or two positive weights [w0, w1]");
    }
    s.class_weights = spec;
}

void read_pos_weight(const KeyContext& c, TrainSettings& s) {
    if (c.node.IsNull() || (c.node.IsScalar() && c.node.Scalar().empty())) {
        s.pos_weight = "none";
        return;
    }
    const std::string spec = c.node.IsScalar() ? c.node.Scalar() : "";
    std::optional<float> value;
    try {
        value = pos_weight_value(spec, 1, 1);
    } catch (const std::invalid_argument&) {
        c.fail(fmt::format("none, balanced, or a number > 0 (the positives' loss multiplier){}",
                           did_you_mean(spec, {"none", "balanced"})));
    }
    // A number is kept in one spelling, so "2.50" and "2.5" are the same run.
    s.pos_weight = spec == "none" || spec == "balanced" ? spec : fmt::format("{}", *value);
}

const std::map<std::string, KeyReader>& key_readers() {
    static const std::map<std::string, KeyReader> readers = {
        {"data.path", [](const KeyContext& c, TrainSettings& s) { s.data_path = c.text(); }},
        {"data.format",
         [](const KeyContext& c, TrainSettings& s) {
             s.data_format = c.choice({"auto", "sklearn", "plain"});
         }},
        {"data.test_fraction",
         [](const KeyContext& c, TrainSettings& s) { s.test_fraction = c.number(0, true, 0.9); }},
        {"data.synthetic", read_synthetic},
        {"data.synthetic_noise",
         [](const KeyContext& c, TrainSettings& s) { s.synthetic_noise = c.number(0, false); }},
        {"model.kind",
         [](const KeyContext& c, TrainSettings& s) {
             s.model_kind = c.choice({"logistic", "linear", "mlp"});
         }},
        {"model.hidden", read_hidden},
        {"loss",
         [](const KeyContext& c, TrainSettings& s) {
             // Checked against the task once every key is read (check_task_keys).
             s.loss = c.node.IsScalar() ? c.node.Scalar() : "";
         }},
        {"loss_beta", [](const KeyContext& c, TrainSettings& s) { s.loss_beta = c.number(0, true); }},
        {"task", [](const KeyContext& c, TrainSettings& s) { s.task = c.choice(task_names()); }},
        {"optimizer.kind",
         [](const KeyContext& c, TrainSettings& s) {
             s.optimizer = c.choice({"adam", "sgd"});
         }},
        {"optimizer.lr", [](const KeyContext& c, TrainSettings& s) { s.learning_rate = c.number(0, true); }},
        {"optimizer.momentum",
         [](const KeyContext& c, TrainSettings& s) { s.momentum = c.number(0, false, 0.999999); }},
        {"optimizer.beta1",
         [](const KeyContext& c, TrainSettings& s) { s.beta1 = c.number(0, false, 0.999999); }},
        {"optimizer.beta2",
         [](const KeyContext& c, TrainSettings& s) { s.beta2 = c.number(0, false, 0.999999); }},
        {"optimizer.epsilon", [](const KeyContext& c, TrainSettings& s) { s.epsilon = c.number(0, true); }},
        {"optimizer.weight_decay",
         [](const KeyContext& c, TrainSettings& s) { s.weight_decay = c.number(0, false); }},
        {"train.epochs", [](const KeyContext& c, TrainSettings& s) { s.epochs = c.whole(1); }},
        {"train.batch_size", [](const KeyContext& c, TrainSettings& s) { s.batch_size = c.whole(1); }},
        {"train.threads",
         [](const KeyContext& c, TrainSettings& s) { s.threads = c.whole(0, kLargestThreads); }},
        {"train.seed",
         [](const KeyContext& c, TrainSettings& s) { s.seed = static_cast<uint64_t>(c.whole(0)); }},
        {"train.class_weights", read_class_weights},
        {"train.pos_weight", read_pos_weight},
        {"checkpoint.every", [](const KeyContext& c, TrainSettings& s) { s.checkpoint_every = c.whole(0); }},
        {"output.dir",
         [](const KeyContext& c, TrainSettings& s) {
             if (!c.node.IsNull()) s.output_dir = c.text();  // empty: named after the config and backend
         }},
    };
    return readers;
}

std::vector<std::string> known_keys() {
    std::vector<std::string> keys;
    for (const auto& entry : key_readers()) keys.push_back(entry.first);
    return keys;
}

void set_path(YAML::Node node, const std::vector<std::string>& parts, size_t index, const YAML::Node& value) {
    if (index + 1 == parts.size()) {
        node[parts[index]] = value;
        return;
    }
    YAML::Node child = node[parts[index]];
    if (!child.IsMap()) child = YAML::Node(YAML::NodeType::Map);
    set_path(child, parts, index + 1, value);
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end - start));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

// Where the text's second YAML document starts, if it has one. Not YAML::LoadAll: yaml-cpp
// 0.7's LoadAll never returns on some malformed texts (a ',' where a document should start
// makes an empty document without being consumed, again and again). A document that starts
// where the one before it started is that case, and is refused as malformed.
std::optional<YAML::Mark> second_document_start(const std::string& text) {
    struct Starts final : YAML::EventHandler {
        std::vector<YAML::Mark> marks;
        void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
        void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
        void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
        void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                             YAML::EmitterStyle::value) override {}
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                        YAML::EmitterStyle::value) override {}
        void OnMapEnd() override {}
    } starts;
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    while (starts.marks.size() < 3 && parser.HandleNextDocument(starts))
        if (starts.marks.size() >= 2 && starts.marks.back().pos == starts.marks.end()[-2].pos)
            throw YAML::ParserException(starts.marks.back(), "no YAML document can start here");
    return starts.marks.size() >= 2 ? std::optional<YAML::Mark>(starts.marks[1]) : std::nullopt;
}

// The keys whose meaning depends on the task, once every key is read: the loss is one of
// the task's (its first when none is given), and the class weights fit its classes.
void check_task_keys(const ConfigDocument& document, const std::map<std::string, YAML::Node>& leaves,
                     TrainSettings& settings) {
    const Task task = task_named(settings.task);
    const std::vector<std::string>& losses = task_losses(task);
    const auto given = [&](const char* key) { return leaves.count(key) > 0; };
    const auto where = [&](const char* key) { return position(document, key, leaves.at(key)); };
    if (!given("loss")) settings.loss = losses.front();
    if (std::find(losses.begin(), losses.end(), settings.loss) == losses.end()) {
        const std::optional<Task> other = task_of_loss(settings.loss);
        const std::string shown = leaves.at("loss").IsScalar() ? settings.loss : "a list or mapping";
        throw std::runtime_error(fmt::format(
            "{}: key 'loss' has value '{}'{}; expected one of {}{}{}", where("loss"), shown,
            other ? fmt::format(", a loss of task {}, not of this run's task", task_name(*other)) : "",
            fmt::join(losses, ", "),
            task == Task::kBinary ? "" : fmt::format(" (the losses of task {})", task_name(task)),
            other ? "" : did_you_mean(settings.loss, losses)));
    }
    if (task != Task::kBinary && given("train.pos_weight") && settings.pos_weight != "none")
        throw std::runtime_error(
            fmt::format("{}: key 'train.pos_weight' weighs the positive class of a binary task; task is {} "
                        "(set it to none)",
                        where("train.pos_weight"), task_name(task)));
    if (task == Task::kRegression && given("train.class_weights"))
        throw std::runtime_error(fmt::format(
            "{}: key 'train.class_weights' weighs classes; a regression task has none (remove it)",
            where("train.class_weights")));
    if (task == Task::kMulticlass && settings.class_weights != "balanced" && settings.class_weights != "none")
        throw std::runtime_error(fmt::format(
            "{}: key 'train.class_weights' has value '[{}]'; expected balanced or none for task multiclass",
            where("train.class_weights"), settings.class_weights));
    if (task != Task::kBinary && settings.synthetic)
        throw std::runtime_error(fmt::format(
            "{}: data.synthetic makes a binary data set; task {} needs a data file (application.data.path)",
            document.source.string(), task_name(task)));
}

}  // namespace

ConfigDocument read_config_document(const std::filesystem::path& path) {
    const std::string shown = nnplug::escaped(path.string());
    const std::string text = read_regular_file(path, kLargestConfigBytes, "config file");
    ConfigDocument document;
    document.source = std::filesystem::absolute(path);
    try {
        if (const std::optional<YAML::Mark> second = second_document_start(text))
            throw std::runtime_error(
                fmt::format("{}:{}:{}: a second YAML document ('---'); a config is one document", shown,
                            second->line + 1, second->column + 1));
        document.root = YAML::Load(text);
    } catch (const YAML::Exception& exception) {
        throw std::runtime_error(fmt::format("{}:{}:{}: malformed YAML: {}", shown, exception.mark.line + 1,
                                             exception.mark.column + 1, nnplug::escaped(exception.msg)));
    }
    if (document.root.IsNull()) document.root = YAML::Node(YAML::NodeType::Map);
    if (!document.root.IsMap())
        throw std::runtime_error(fmt::format("{}: the top level must be a mapping of keys to values", shown));
    return document;
}

void apply_override(ConfigDocument& document, const std::string& assignment) {
    const size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0)
        throw std::runtime_error(
            fmt::format("--set '{}': expected KEY=VALUE, e.g. optimizer.lr=0.01", assignment));
    std::string key = assignment.substr(0, equals);
    const std::string value_text = assignment.substr(equals + 1);
    if (key.rfind("application.", 0) == 0) key = key.substr(std::string("application.").size());
    std::vector<std::string> parts = split(key, '.');
    if (std::any_of(parts.begin(), parts.end(), [](const std::string& part) { return part.empty(); }))
        throw std::runtime_error(fmt::format("--set '{}': key '{}' has an empty component", assignment, key));
    YAML::Node value;
    try {
        value = YAML::Load(value_text);
    } catch (const YAML::Exception& exception) {
        throw std::runtime_error(
            fmt::format("--set '{}': value is not valid YAML: {}", assignment, exception.msg));
    }
    if (std::find(kRuntimeKeys.begin(), kRuntimeKeys.end(), parts[0]) != kRuntimeKeys.end()) {
        set_path(document.root, parts, 0, value);  // the runtime checks these when aclInit reads them
        document.runtime_overridden = true;
        return;
    }
    const auto& readers = key_readers();
    if (readers.count(key) == 0) {
        std::vector<std::string> candidates = known_keys();
        candidates.insert(candidates.end(), kRuntimeKeys.begin(), kRuntimeKeys.end());
        throw std::runtime_error(
            fmt::format("--set '{}': unknown key '{}'{}", assignment, key, did_you_mean(key, candidates)));
    }
    YAML::Node application = document.root["application"];
    if (!application.IsMap()) application = YAML::Node(YAML::NodeType::Map);
    set_path(application, parts, 0, value);
    document.overrides[key] = assignment;
}

TrainSettings read_train_settings(const ConfigDocument& document,
                                  const std::vector<std::filesystem::path>& data_folders) {
    TrainSettings settings;
    const YAML::Node application = document.root["application"];
    std::map<std::string, YAML::Node> leaves;
    if (application && !application.IsNull()) {
        if (!application.IsMap())
            throw std::runtime_error(fmt::format(
                "{}: key 'application' must be a mapping of training settings", document.source.string()));
        // One level past the deepest known key, so a key under a known one is named whole.
        size_t deepest = 0;
        for (const auto& key : known_keys())
            deepest = std::max<size_t>(deepest, std::count(key.begin(), key.end(), '.') + 1);
        flatten(document, application, "", deepest + 1, leaves);
    }
    const auto& readers = key_readers();
    for (const auto& [key, node] : leaves) {
        const auto reader = readers.find(key);
        if (reader == readers.end())
            throw std::runtime_error(fmt::format("{}: unknown key 'application.{}'{}",
                                                 position(document, key, node), key,
                                                 did_you_mean(key, known_keys())));
        reader->second(KeyContext{document, key, node}, settings);
    }
    check_task_keys(document, leaves, settings);
    if (settings.model_kind == "mlp" && settings.hidden.empty())
        throw std::runtime_error(fmt::format("{}: model.kind is mlp but model.hidden lists no layer sizes",
                                             document.source.string()));
    if (settings.model_kind != "mlp") settings.hidden.clear();
    if (settings.pos_weight == "balanced" && settings.class_weights == "balanced") {
        // Both rebalance the classes: together they would weight the positives by the class
        // ratio twice over.
        const std::string key = "train.pos_weight";
        throw std::runtime_error(fmt::format(
            "{}: key '{}' is balanced and train.class_weights is balanced too, which weights the positives "
            "twice; set train.class_weights to none (or give pos_weight a number)",
            position(document, key, leaves.at(key)), key));
    }

    if (!settings.synthetic) {
        if (settings.data_path.empty())
            throw std::runtime_error(fmt::format(
                "{}: no data set: set application.data.path or use --synthetic", document.source.string()));
        std::vector<std::filesystem::path> tried;
        const auto given = settings.data_path;
        tried.push_back(given.is_absolute() ? given : document.source.parent_path() / given);
        for (const auto& folder : data_folders) tried.push_back(folder / given.filename());
        // A place the file system refuses to look at (a name too long, a folder not searchable)
        // is one where the file is not; the message says why.
        std::vector<std::string> shown;
        const auto found = std::find_if(tried.begin(), tried.end(), [&](const auto& path) {
            std::error_code error;
            const auto status = std::filesystem::status(path, error);
            shown.push_back(path.lexically_normal().string());
            if (error && status.type() != std::filesystem::file_type::not_found)
                shown.back() += " (" + error.message() + ")";
            return status.type() == std::filesystem::file_type::regular;
        });
        if (found == tried.end())
            throw std::runtime_error(fmt::format("data file '{}' not found; looked at: {}", given.string(),
                                                 fmt::join(shown, ", ")));
        settings.data_path = std::filesystem::canonical(*found);
    }
    return settings;
}

std::string effective_backend(const ConfigDocument& document) {
    const char* forced = std::getenv("NNPLUG_BACKEND");
    if (forced && *forced) return forced;
    const YAML::Node backend = document.root["backend"];
    return backend && backend.IsScalar() ? backend.Scalar() : "cpu_tbb";
}

std::string effective_config_text(const ConfigDocument& document, const std::filesystem::path& data_path,
                                  const std::string& backend, const std::filesystem::path& output_dir) {
    YAML::Node root = YAML::Clone(document.root);
    if (!backend.empty()) root["backend"] = backend;
    if (!data_path.empty())
        set_path(root, {"application", "data", "path"}, 0, YAML::Node(data_path.string()));
    if (!output_dir.empty())
        set_path(root, {"application", "output", "dir"}, 0, YAML::Node(output_dir.string()));
    const YAML::Node paths = root["plugin_paths"];
    if (paths && paths.IsSequence()) {
        YAML::Node absolute(YAML::NodeType::Sequence);
        for (const auto& item : paths) {
            std::filesystem::path path = item.Scalar();
            absolute.push_back((path.is_absolute() ? path : document.source.parent_path() / path).string());
        }
        root["plugin_paths"] = absolute;
    }
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str()) + "\n";
}

std::filesystem::path default_output_dir(const ConfigDocument& document, const std::string& backend) {
    return std::filesystem::path("train_output") / (document.source.stem().string() + "-" + backend);
}

bool names_output_dir(const ConfigDocument& document) {
    const YAML::Node application = document.root["application"];
    if (!application || !application.IsMap()) return false;
    const YAML::Node output = application["output"];
    return output && output.IsMap() && output["dir"] && !output["dir"].IsNull();
}

std::vector<std::pair<std::string, std::string>> trajectory_settings(const TrainSettings& s) {
    std::vector<std::pair<std::string, std::string>> lines = {
        {"data.test_fraction", fmt::format("{}", s.test_fraction)},
        {"data.synthetic", s.synthetic ? fmt::format("{},{}", s.synthetic->rows, s.synthetic->features) : ""},
        {"data.synthetic_noise", s.synthetic ? fmt::format("{}", s.synthetic_noise) : ""},
        {"loss", s.loss},
        {"model.kind", s.model_kind},
        {"model.hidden", fmt::format("[{}]", fmt::join(s.hidden, ","))},
        {"optimizer.kind", s.optimizer},
        {"optimizer.lr", fmt::format("{}", s.learning_rate)},
        {"optimizer.momentum", fmt::format("{}", s.momentum)},
        {"optimizer.beta1", fmt::format("{}", s.beta1)},
        {"optimizer.beta2", fmt::format("{}", s.beta2)},
        {"optimizer.epsilon", fmt::format("{}", s.epsilon)},
        {"optimizer.weight_decay", fmt::format("{}", s.weight_decay)},
        {"train.batch_size", fmt::format("{}", s.batch_size)},
        {"train.seed", fmt::format("{}", s.seed)},
        {"train.class_weights", s.class_weights},
        {"train.pos_weight", s.pos_weight},
    };
    // The binary task's lines are as they were before there were tasks, so that its
    // checkpoints stay the same bytes.
    if (s.task != "binary") {
        lines.emplace_back("task", s.task);
        lines.emplace_back("loss_beta", fmt::format("{}", s.loss_beta));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

SyntheticShape parse_synthetic_shape(const std::string& text) {
    const auto parts = split(text, ',');
    SyntheticShape shape;
    try {
        size_t used = 0;
        if (parts.size() != 2) throw std::invalid_argument("two numbers");
        shape.rows = std::stoll(parts[0], &used);
        if (used != parts[0].size()) throw std::invalid_argument("rows");
        shape.features = std::stoll(parts[1], &used);
        if (used != parts[1].size()) throw std::invalid_argument("features");
    } catch (const std::exception&) {
        throw std::invalid_argument(fmt::format("'{}' is not ROWS,FEATURES", text));
    }
    if (shape.rows < 10 || shape.features < 1)
        throw std::invalid_argument(fmt::format("'{}': need ROWS >= 10 and FEATURES >= 1", text));
    // Refused before anything is allocated: more than any host's address space, where
    // ROWS x FEATURES x 4 would even wrap around.
    if (shape.features > kLargestDataBytes / 4 / shape.rows)
        throw std::invalid_argument(
            fmt::format("'{}': ROWS x FEATURES float32 values take {:.4g} bytes; at most {} ({} TiB)", text,
                        4.0 * static_cast<double>(shape.rows) * static_cast<double>(shape.features),
                        kLargestDataBytes, kLargestDataBytes >> 40));
    return shape;
}

std::pair<float, float> class_weight_values(const std::string& spec, int64_t negatives, int64_t positives) {
    if (spec == "none") return {1.0f, 1.0f};
    if (spec == "balanced") {
        // As scikit-learn's "balanced": n_samples / (n_classes * count of the class).
        const double total = static_cast<double>(negatives + positives);
        return {negatives ? static_cast<float>(total / (2.0 * negatives)) : 1.0f,
                positives ? static_cast<float>(total / (2.0 * positives)) : 1.0f};
    }
    const auto parts = split(spec, ',');
    if (parts.size() == 2) {
        try {
            size_t used0 = 0, used1 = 0;
            const float w0 = std::stof(parts[0], &used0);
            const float w1 = std::stof(parts[1], &used1);
            if (used0 == parts[0].size() && used1 == parts[1].size() && w0 > 0 && w1 > 0) return {w0, w1};
        } catch (const std::exception&) {
        }
    }
    throw std::invalid_argument(fmt::format("class weights '{}' are not balanced, none or 'w0,w1'", spec));
}

std::optional<float> pos_weight_value(const std::string& spec, int64_t negatives, int64_t positives) {
    if (spec == "none") return std::nullopt;
    if (spec == "balanced") {
        if (positives == 0 || negatives == 0) return std::nullopt;  // one class: nothing to balance
        return static_cast<float>(static_cast<double>(negatives) / static_cast<double>(positives));
    }
    try {
        size_t used = 0;
        const double value = std::stod(spec, &used);
        const float rounded = static_cast<float>(value);
        if (used == spec.size() && std::isfinite(rounded) && rounded > 0) return rounded;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument(fmt::format("pos_weight '{}' is not none, balanced or a number > 0", spec));
}

}  // namespace train
