// The README and the docs against the code: the op table names exactly the ops of the ABI's
// op list (plugins/include/nnplug/op_slots.h), each header it names exists, the README
// stays short, and every relative link of the Markdown pages leads to a file and heading.
#include <gtest/gtest.h>
#include <nnplug/op_slots.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kSource = NNPLUG_SOURCE_DIR;

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

std::vector<std::string> runtime_ops() {
    std::vector<std::string> ops;
    for (int op = 0; op < NNPLUG_OP_KIND_COUNT; ++op) ops.emplace_back(nnplug_op_api_name(op));
    return ops;
}

// The op table's rows: a table line whose first cell is a backticked aclnn name.
std::vector<std::vector<std::string>> op_rows(const std::string& markdown) {
    static const std::regex row(R"(^\|\s*`(aclnn\w+)`\s*\|(.*)$)");
    std::vector<std::vector<std::string>> rows;
    for (const std::string& line : lines_of(markdown)) {
        std::smatch match;
        if (!std::regex_match(line, match, row)) continue;
        std::vector<std::string> cells{match[1]};
        std::stringstream rest(match[2].str());
        for (std::string cell; std::getline(rest, cell, '|');) cells.push_back(cell);
        rows.push_back(cells);
    }
    return rows;
}

// What is wrong with the op table of `markdown` against `ops`, one line per problem.
std::vector<std::string> op_table_problems(const std::string& markdown, const std::vector<std::string>& ops) {
    std::vector<std::string> problems;
    std::map<std::string, int> rows;
    for (const auto& cells : op_rows(markdown)) ++rows[cells[0]];
    for (const std::string& op : ops)
        if (rows.count(op) == 0) problems.push_back(op + " has no row");
    for (const auto& [name, count] : rows) {
        if (std::find(ops.begin(), ops.end(), name) == ops.end())
            problems.push_back(name + " is not an op of the runtime");
        if (count > 1) problems.push_back(name + " has " + std::to_string(count) + " rows");
    }
    return problems;
}

const char* kTable =
    "| op | computes |\n|---|---|\n"
    "| `aclnnA` | a |\n"
    "| `aclnnB` | b |\n";

TEST(ReadmeOpTable, TheCheckFindsAMissingRow) {
    EXPECT_EQ(op_table_problems(kTable, {"aclnnA", "aclnnB", "aclnnC"}),
              std::vector<std::string>{"aclnnC has no row"});
}

TEST(ReadmeOpTable, TheCheckFindsARowForNoOpAndATwiceListedOp) {
    EXPECT_EQ(op_table_problems(std::string(kTable) + "| `aclnnA` | again |\n", {"aclnnA"}),
              (std::vector<std::string>{"aclnnA has 2 rows", "aclnnB is not an op of the runtime"}));
    EXPECT_TRUE(op_table_problems(kTable, {"aclnnB", "aclnnA"}).empty());
}

TEST(ReadmeOpTable, NamesExactlyTheRuntimesOps) {
    const std::vector<std::string> ops = runtime_ops();
    ASSERT_GE(ops.size(), 5u);
    for (const std::string& problem : op_table_problems(read_text(kSource / "README.md"), ops))
        ADD_FAILURE() << "README.md's op table: " << problem;
}

TEST(ReadmeOpTable, EveryHeaderItNamesIsShipped) {
    std::set<std::string> headers;
    for (const auto& op_folder : fs::directory_iterator(kSource / "ops"))
        if (fs::is_directory(op_folder.path() / "include" / "aclnnop"))
            for (const auto& file : fs::directory_iterator(op_folder.path() / "include" / "aclnnop"))
                headers.insert(file.path().filename().string());
    const auto rows = op_rows(read_text(kSource / "README.md"));
    ASSERT_FALSE(rows.empty());
    static const std::regex header_cell(R"(`(aclnn_\w+\.h)`)");
    for (const auto& cells : rows) {
        std::smatch match;
        const bool named = cells.size() > 2 && std::regex_search(cells[2], match, header_cell);
        EXPECT_TRUE(named) << cells[0] << ": no header in its third column";
        if (named) {
            EXPECT_EQ(headers.count(match[1]), 1u) << cells[0] << ": no ops/*/include/aclnnop/" << match[1];
        }
    }
}

TEST(Readme, FitsInTwoHundredFiftyLines) {
    EXPECT_LE(lines_of(read_text(kSource / "README.md")).size(), 250u);
}

// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, and a
// "-N" suffix on the N-th repeat.
std::set<std::string> anchors_of(const std::string& markdown) {
    std::set<std::string> anchors;
    std::map<std::string, int> seen;
    bool in_code = false;
    for (const std::string& line : lines_of(markdown)) {
        if (line.rfind("```", 0) == 0) in_code = !in_code;
        if (in_code || line.empty() || line[0] != '#') continue;
        const std::string title = line.substr(line.find_first_not_of('#'));
        std::string slug;
        for (unsigned char c : title) {
            if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
                slug += static_cast<char>(std::tolower(c));
            else if (c == ' ')
                slug += '-';
        }
        slug.erase(0, slug.find_first_not_of('-'));
        const int repeat = seen[slug]++;
        anchors.insert(repeat == 0 ? slug : slug + "-" + std::to_string(repeat));
    }
    return anchors;
}

TEST(DocsLinks, AnchorsAreGitHubs) {
    const auto anchors =
        anchors_of("# A `b` c.d\n```\n# not a heading\n```\n## Scaling: threads\n## x\n## x\n");
    EXPECT_EQ(anchors, (std::set<std::string>{"a-b-cd", "scaling-threads", "x", "x-1"}));
}

// Every relative link of one page: "file: target (why)" per broken link.
std::vector<std::string> broken_links(const fs::path& page) {
    static const std::regex link(R"(\]\(([^)\s]+)\))");
    std::vector<std::string> broken;
    bool in_code = false;
    for (const std::string& line : lines_of(read_text(page))) {
        if (line.rfind("```", 0) == 0) in_code = !in_code;
        if (in_code) continue;
        for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
            const std::string target = (*it)[1];
            if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
            const size_t hash = target.find('#');
            const fs::path file = hash == 0 ? page : page.parent_path() / target.substr(0, hash);
            const std::string where = fs::relative(page, kSource).string() + ": " + target;
            if (!fs::exists(file)) {
                broken.push_back(where + " (no such file)");
            } else if (hash != std::string::npos && file.extension() == ".md" &&
                       anchors_of(read_text(file)).count(target.substr(hash + 1)) == 0) {
                broken.push_back(where + " (no such heading)");
            }
        }
    }
    return broken;
}

TEST(DocsLinks, EveryRelativeLinkLeadsToAFileAndHeading) {
    std::vector<fs::path> pages{kSource / "README.md", kSource / "CONTRIBUTING.md"};
    for (const auto& entry : fs::recursive_directory_iterator(kSource / "docs"))
        if (entry.path().extension() == ".md") pages.push_back(entry.path());
    for (const fs::path& page : pages) {
        ASSERT_TRUE(fs::exists(page)) << page;
        for (const std::string& broken : broken_links(page)) ADD_FAILURE() << broken;
    }
}

}  // namespace
