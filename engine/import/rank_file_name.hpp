// Which rank a per-rank file belongs to, from its name, for the formats whose content may not
// say: "trace_rank3.json.gz", "rank_12.pt.trace.json", and for flight-recorder dumps PyTorch's
// own naming, the dump prefix followed by the rank ("nccl_trace_rank_5", "/tmp/fr_5").
#pragma once

#include <optional>
#include <string_view>

namespace pipelens::import {

enum class RankNaming {
    rank_word,             // only "rank<N>" (also "rank_N", "Rank-N") in the file's own name
    rank_word_or_trailing  // that, else the digits the name ends with (extension aside)
};

std::optional<int> rank_from_file_name(std::string_view path,
                                       RankNaming naming = RankNaming::rank_word);

}  // namespace pipelens::import
