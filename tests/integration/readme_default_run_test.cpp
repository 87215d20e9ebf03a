// The README's "What the main job prints" against the main job itself: nnplug_train run as
// tools/dev.sh run runs it (the default config, --output a folder), every line of the
// README's block in its output, and the block's test accuracy, ROC AUC and loss in the
// run's summary.json. The run takes well under a second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The fenced block after the comment that names this test.
std::vector<std::string> readme_block(const std::string& readme) {
    std::vector<std::string> block;
    bool after_comment = false, inside = false;
    for (const std::string& line : lines_of(readme)) {
        if (line.find("readme_default_run_test.cpp") != std::string::npos) after_comment = true;
        if (!after_comment) continue;
        if (line.rfind("```", 0) == 0) {
            if (inside) break;
            inside = true;
        } else if (inside) {
            block.push_back(line);
        }
    }
    return block;
}

const std::string kEllipsis = "\u2026";

// The block's lines found in no line of the output; a line ending in "…" matches an output
// line that starts with what comes before it.
std::vector<std::string> missing_lines(const std::vector<std::string>& block, const std::string& output) {
    std::vector<std::string> missing;
    const std::vector<std::string> printed = lines_of(output);
    for (const std::string& line : block) {
        const bool prefix = line.size() >= kEllipsis.size() &&
                            line.compare(line.size() - kEllipsis.size(), std::string::npos, kEllipsis) == 0;
        const std::string wanted = prefix ? line.substr(0, line.size() - kEllipsis.size()) : line;
        bool found = false;
        for (const std::string& p : printed)
            found = found || (prefix ? p.rfind(wanted, 0) == 0 : p == wanted);
        if (!found) missing.push_back(line);
    }
    return missing;
}

TEST(ReadmeDefaultRun, TheLineCheckHonoursTheEllipsisAndNothingElse) {
    const std::string output = "epoch 1  loss 0.5  |  3.1M samples/s\nTest accuracy: 97.35%\n";
    EXPECT_TRUE(missing_lines({"epoch 1  loss 0.5  |  \u2026", "Test accuracy: 97.35%"}, output).empty());
    EXPECT_EQ(missing_lines({"Test accuracy: 97.34%"}, output),
              std::vector<std::string>{"Test accuracy: 97.34%"});
    EXPECT_EQ(missing_lines({"Test accuracy: 97.3"}, output),
              std::vector<std::string>{"Test accuracy: 97.3"});
    EXPECT_EQ(missing_lines({"epoch 1  loss 0.6\u2026"}, output),
              std::vector<std::string>{"epoch 1  loss 0.6\u2026"});
}

std::string json_number(const std::string& json, const std::string& key) {
    std::smatch match;
    const std::regex pattern("\"" + key + "\":\\s*([-0-9.eE+]+)");
    return std::regex_search(json, match, pattern) ? match[1].str() : "";
}

std::string fixed(double value, int digits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

// The command of tools/dev.sh's run_main_job that this test mirrors (with a scratch folder
// for build/train_output/train_cpu-cpu_tbb); a change there must come here and to the README.
TEST(ReadmeDefaultRun, MirrorsTheCommandOfToolsDevShRun) {
    const std::string script = read_text(fs::path(NNPLUG_SOURCE_DIR) / "tools" / "dev.sh");
    const size_t body = script.find("run_main_job() {");
    ASSERT_NE(body, std::string::npos) << "no run_main_job in tools/dev.sh";
    const std::string command = script.substr(body, script.find('}', body) - body);
    EXPECT_NE(command.find(
                  "\"$BUILD_DIR/bin/nnplug_train\" --output \"$BUILD_DIR/train_output/train_cpu-cpu_tbb\"\n"),
              std::string::npos)
        << "tools/dev.sh run no longer runs what README.md's \"What the main job prints\" shows:\n"
        << command;
}

TEST(ReadmeDefaultRun, PrintsWhatTheReadmeSays) {
    const fs::path folder = fs::temp_directory_path() / ("nnplug_readme_run_" + std::to_string(::getpid()));
    fs::remove_all(folder);
    const std::string command = std::string(NNPLUG_TRAIN_PROGRAM) + " --output " + folder.string() + " 2>&1";
    std::string output;
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    ASSERT_EQ(::pclose(pipe), 0) << output;

    std::vector<std::string> block = readme_block(read_text(fs::path(NNPLUG_SOURCE_DIR) / "README.md"));
    ASSERT_GE(block.size(), 3u) << "no block after the comment naming this test in README.md";
    for (std::string& line : block)  // tools/dev.sh run's folder, here a scratch one
        if (const size_t at = line.find("build/train_output/train_cpu-cpu_tbb"); at != std::string::npos)
            line.replace(at, std::string("build/train_output/train_cpu-cpu_tbb").size(), folder.string());
    for (const std::string& line : missing_lines(block, output))
        ADD_FAILURE() << "README.md says the default run prints\n  " << line << "\nbut it printed:\n"
                      << output;

    std::smatch stated;
    std::string summary_line;
    for (const std::string& line : block)
        if (line.rfind("Test accuracy:", 0) == 0) summary_line = line;
    ASSERT_TRUE(std::regex_search(summary_line, stated,
                                  std::regex(R"(([0-9.]+)% .*ROC AUC ([0-9.]+), test loss ([0-9.]+))")))
        << "no test accuracy, ROC AUC and loss in README.md's block: " << summary_line;
    const std::string json = read_text(folder / "summary.json");
    ASSERT_FALSE(json_number(json, "test_accuracy").empty()) << json;
    EXPECT_EQ(fixed(std::stod(json_number(json, "test_accuracy")) * 100, 2), stated[1].str()) << json;
    EXPECT_EQ(fixed(std::stod(json_number(json, "test_roc_auc")), 4), stated[2].str()) << json;
    EXPECT_EQ(fixed(std::stod(json_number(json, "test_loss")), 4), stated[3].str()) << json;
    fs::remove_all(folder);
}

}  // namespace
