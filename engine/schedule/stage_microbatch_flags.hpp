// A dense table of one flag byte per (stage, microbatch). The lowering, the static check and
// the dry run all ask "has X of stage s, microbatch k happened yet?" millions of times; a stage
// runs on one rank only, so one global byte replaces PyTorch's per-rank sets of actions.
// Lookups outside the table read as "nothing happened" instead of failing.
#pragma once

#include <cstdint>
#include <vector>

namespace pipelens {

class StageMicrobatchFlags {
  public:
    StageMicrobatchFlags(int stage_count, int microbatch_count)
        : stage_count_(stage_count),
          microbatch_count_(microbatch_count),
          flags_(static_cast<std::size_t>(stage_count) * microbatch_count, 0) {}

    bool contains(int stage, int microbatch) const {
        return stage >= 0 && stage < stage_count_ && microbatch >= 0 &&
               microbatch < microbatch_count_;
    }
    std::uint8_t get(int stage, int microbatch) const {
        return contains(stage, microbatch) ? flags_[index(stage, microbatch)] : 0;
    }
    bool has(int stage, int microbatch, std::uint8_t flag) const {
        return (get(stage, microbatch) & flag) != 0;
    }
    void set(int stage, int microbatch, std::uint8_t flag) {
        if (contains(stage, microbatch))
            flags_[index(stage, microbatch)] |= flag;
    }

  private:
    std::size_t index(int stage, int microbatch) const {
        return static_cast<std::size_t>(stage) * microbatch_count_ + microbatch;
    }

    int stage_count_;
    int microbatch_count_;
    std::vector<std::uint8_t> flags_;
};

}  // namespace pipelens
