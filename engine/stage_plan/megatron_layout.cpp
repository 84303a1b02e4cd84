// A recursive-descent reader that expands repetitions into one symbol list, remembering each
// symbol's column so that the checks on the expanded stages can still point into the text.
#include "engine/stage_plan/megatron_layout.hpp"

#include <fmt/format.h>

namespace pipelens::runtime {
namespace {

// A count is read into an int only up to this; kMaxSymbols bounds what counts can expand to.
constexpr int kMaxRepeat = 1'000'000;
// Nested repetitions multiply ("(t*1000|)*1000000" is a billion symbols from 17 characters), so
// the expansion is bounded before it is made: far more stages and layers than any model has,
// and at most a few megabytes and milliseconds per level of nesting.
constexpr std::size_t kMaxSymbols = 100'000;
// Each '(' is a level of recursion: bounded, so that a text of many '(' is refused rather than
// overflowing the stack.
constexpr int kMaxDepth = 64;

struct Symbol {
    char symbol;
    std::size_t column;  // 1-based
};

class LayoutReader {
  public:
    explicit LayoutReader(std::string_view text) : text_(text) {}

    std::vector<Symbol> read() {
        std::vector<Symbol> symbols = sequence();
        if (at_ < text_.size())  // only a ')' stops a sequence early
            fail(at_, "')' closes no '('");
        return symbols;
    }

    [[noreturn]] static void fail(std::size_t offset, const std::string& why) {
        throw LayoutError(fmt::format("column {}: {}", offset + 1, why));
    }

  private:
    std::vector<Symbol> sequence() {
        std::vector<Symbol> out;
        while (at_ < text_.size() && text_[at_] != ')') {
            const std::size_t start = at_;
            std::vector<Symbol> item = next_item();
            const int times = repeat();
            if (item.size() > (kMaxSymbols - out.size()) / static_cast<std::size_t>(times))
                fail(start, fmt::format("the layout expands to more than {} symbols; write "
                                        "fewer or smaller repetitions",
                                        kMaxSymbols));
            if (out.empty() && times == 1) {
                out = std::move(item);
                continue;
            }
            for (int copy = 0; copy < times; ++copy)
                out.insert(out.end(), item.begin(), item.end());
        }
        return out;
    }

    std::vector<Symbol> next_item() {
        const std::size_t start = at_;
        const char c = text_[at_++];
        switch (c) {
            case 'E':
            case 't':
            case 'L':
            case '|':
                return {{c, start + 1}};
            case ',':
                return {};
            case '(': {
                if (++depth_ > kMaxDepth)
                    fail(start, fmt::format("groups nest deeper than {} levels", kMaxDepth));
                std::vector<Symbol> inside = sequence();
                --depth_;
                if (at_ >= text_.size())
                    fail(start, "'(' is never closed");
                ++at_;
                return inside;
            }
            case 'm':
                fail(start, "'m' (an MTP layer): pipelens models no MTP layers");
            case '*':
                fail(start, "'*' repeats nothing: put it after a symbol or a ')'");
            default:
                fail(start, fmt::format("'{}' is not E, t, L, |, (, ), * or ,", c));
        }
    }

    int repeat() {
        if (at_ >= text_.size() || text_[at_] != '*')
            return 1;
        const std::size_t star = at_++;
        std::size_t digits = at_;
        long long value = 0;
        while (digits < text_.size() && text_[digits] >= '0' && text_[digits] <= '9') {
            value = value * 10 + (text_[digits] - '0');
            if (value > kMaxRepeat)
                fail(at_, fmt::format("repetition above {}", kMaxRepeat));
            ++digits;
        }
        if (digits == at_)
            fail(star, "'*' needs a count after it");
        if (value == 0)
            fail(at_, "a count of 0 repeats nothing");
        at_ = digits;
        return static_cast<int>(value);
    }

    std::string_view text_;
    std::size_t at_ = 0;
    int depth_ = 0;  // '(' open around the reader
};

}  // namespace

std::vector<int> parse_megatron_layout(std::string_view text) {
    if (text.empty())
        throw LayoutError("column 1: empty layout");
    const std::vector<Symbol> symbols = LayoutReader(text).read();
    std::vector<int> layers{0};
    bool seen_embedding = false, seen_loss = false;
    for (std::size_t index = 0; index < symbols.size(); ++index) {
        const Symbol& symbol = symbols[index];
        const auto fail = [&](const std::string& why) {
            LayoutReader::fail(symbol.column - 1, why);
        };
        if (seen_loss)
            fail("after L: the loss ends the last stage");
        switch (symbol.symbol) {
            case 'E':
                if (seen_embedding || layers.size() > 1 || layers.back() > 0)
                    fail("E (the embedding) belongs once, at the start of the first stage");
                seen_embedding = true;
                break;
            case 't':
                ++layers.back();
                break;
            case 'L':
                seen_loss = true;
                if (layers.back() == 0)
                    fail(fmt::format("stage {} holds no t: every stage needs a layer",
                                     layers.size() - 1));
                break;
            case '|':
                if (layers.back() == 0)
                    fail(fmt::format("stage {} holds no t: every stage needs a layer",
                                     layers.size() - 1));
                layers.push_back(0);
                break;
        }
    }
    if (!seen_embedding)
        LayoutReader::fail(0, "no E: the first stage starts with the embedding");
    if (!seen_loss)
        LayoutReader::fail(text.size(), "no L: the last stage ends with the loss");
    return layers;
}

std::string megatron_layout(const std::vector<int>& layers_per_stage) {
    const auto stage_text = [](int layers) {
        return layers == 1 ? std::string("t") : fmt::format("t*{}", layers);
    };
    const std::size_t count = layers_per_stage.size();
    std::string out = "E";
    out += stage_text(layers_per_stage.front());
    if (count == 1)
        return out += "L";
    out += "|";
    std::size_t stage = 1;
    while (stage + 1 < count) {
        std::size_t run = 1;
        while (stage + run + 1 < count && layers_per_stage[stage + run] == layers_per_stage[stage])
            ++run;
        out += run == 1 ? fmt::format("{}|", stage_text(layers_per_stage[stage]))
                        : fmt::format("({}|)*{}", stage_text(layers_per_stage[stage]), run);
        stage += run;
    }
    out += stage_text(layers_per_stage.back());
    return out += "L";
}

}  // namespace pipelens::runtime
