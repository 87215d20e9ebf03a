#pragma once
// One YAML document from a config text, read without YAML::LoadAll: yaml-cpp 0.7's LoadAll
// never returns on some malformed texts (where a document should start, a ',' yields an
// empty document without being consumed, again and again, until memory runs out).

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace nnplug {

struct YamlDocument {
    YAML::Node root;                         // null for an empty text
    std::optional<YAML::Mark> second_start;  // where a second document starts, if any
};

// Throws YAML::Exception for malformed text, a token no document can start with included.
YamlDocument load_first_yaml_document(const std::string& text);

}  // namespace nnplug
