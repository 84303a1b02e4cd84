// Megatron-LM's pipeline layout strings (--pipeline-model-parallel-layout), read and written:
// stages separated by '|', E the embedding, t a transformer layer, L the loss (with the output
// layer), X*N repeating a symbol or a parenthesised group N times, commas only for the eye;
// "Et*3|(tt|)*2ttL" is four stages of 3, 2, 2 and 2 layers. Stages are listed in pipeline
// order: with v stages per rank, Megatron puts stage i on rank i mod pp (virtual stage i / pp).
//
// Invariants: what is read has E once, at the start of the first stage, L once, at the end of
// the last, and at least one t in every stage (a pipelens stage runs at least one layer; MTP
// layers (m) and empty stages are refused); every refusal gives the 1-based column it found the
// fault at, and a text that would expand to more than 100,000 symbols, or nests groups deeper
// than 64 levels, is refused before it is expanded. Writing then reading gives back the layers per
// stage.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::runtime {

class LayoutError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// Transformer layers per stage. Throws LayoutError "column C: why".
std::vector<int> parse_megatron_layout(std::string_view text);

// The layout string of `layers_per_stage` (each >= 1): runs of equal stages between the first
// and the last are written as a group, "(t*2|)*5".
std::string megatron_layout(const std::vector<int>& layers_per_stage);

}  // namespace pipelens::runtime
