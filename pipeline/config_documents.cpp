// The config's YAML documents without YAML::LoadAll: on a token it cannot
// start a node with (a stray ','), yaml-cpp 0.7 (Debian 12) consumes nothing
// and hands out the same empty document forever, and LoadAll collects them
// until memory runs out (jbeder/yaml-cpp#1040, fixed after 0.8.0). Found by
// tests/fuzz (regressions/config/lone_comma.yaml).
#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include "pipeline/config_values.h"

namespace sp::config_detail {
namespace {

// Where a document's root node starts, and whether it is a null.
class RootProbe final : public YAML::EventHandler {
 public:
  bool null_root() const { return nodes_ == 0 || null_root_; }
  const YAML::Mark& mark() const { return mark_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    node(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark, bool is_null) {
    if (nodes_++ == 0) mark_ = mark, null_root_ = is_null;
  }
  int nodes_ = 0;
  bool null_root_ = false;
  YAML::Mark mark_;
};

}  // namespace

YamlDocuments load_documents(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  RootProbe first, second;
  if (!parser.HandleNextDocument(first)) return {};
  const bool more = parser.HandleNextDocument(second);
  // A parser that made no progress gives the same empty document again.
  if (more && first.null_root() && second.null_root() && first.mark().pos == second.mark().pos) {
    const size_t at = size_t(first.mark().pos);
    throw YAML::ParserException(first.mark(), at < text.size() ? "unexpected '" + text.substr(at, 1) + "'"
                                                               : "unexpected end of the document");
  }
  // The events above only probed; the tree comes from yaml-cpp's one public
  // builder, which reads a single document.
  YamlDocuments documents{YAML::Load(text), std::nullopt};
  if (more) documents.second_document = second.mark();
  return documents;
}

}  // namespace sp::config_detail
