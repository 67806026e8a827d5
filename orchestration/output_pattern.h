#pragma once
// A batch's inputs and its output pattern: `-i 'clips/*.mp4' -o
// 'out/{stem}_pencil.mp4'`. Pure names; nothing here touches a file but glob(3).
#include <string>
#include <vector>

namespace sp {

// An output with a brace in it is a pattern: {stem}, {name}, {ext}, {index},
// and {{ / }} for a literal brace.
bool is_output_pattern(const std::string& output);
// Throws Error(usage) naming an unknown placeholder or an unpaired brace.
void check_output_pattern(const std::string& pattern);
// The output of the input at `index` (0-based) of the expanded list: {stem}
// its file name without the extension, {name} with it, {ext} the extension
// without its dot.
std::string fill_output_pattern(const std::string& pattern, const std::string& input, size_t index);

// An input that names no existing file but has *, ? or [ in it (and is no
// URL, whose query has a ?) is a pattern for glob(3).
bool is_input_glob(const std::string& input);
// Each input as given, a glob replaced by its matches in byte order. A glob
// that matches nothing is a usage error naming it.
std::vector<std::string> expand_input_globs(const std::vector<std::string>& inputs);

}  // namespace sp
