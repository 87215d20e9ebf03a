#include "yaml_document.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace nnplug {
namespace {

// Records where each document starts; the nodes themselves come from YAML::Load.
class DocumentStarts final : public YAML::EventHandler {
public:
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
};

}  // namespace

YamlDocument load_first_yaml_document(const std::string& text) {
    // Up to three documents: a document that starts where the one before it started was
    // made of a token the parser could not consume, which is malformed YAML.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStarts starts;
    while (starts.marks.size() < 3 && parser.HandleNextDocument(starts)) {
        const size_t count = starts.marks.size();
        if (count >= 2 && starts.marks[count - 1].pos == starts.marks[count - 2].pos)
            throw YAML::ParserException(starts.marks[count - 1], "no YAML document can start here");
    }
    YamlDocument document;
    document.root = YAML::Load(text);
    if (starts.marks.size() >= 2) document.second_start = starts.marks[1];
    return document;
}

}  // namespace nnplug
