// The restricted unpickler. Values are built in an arena (nodes referred to by index), so a memo
// entry made before its container is filled (Python memoizes EMPTY_DICT/EMPTY_LIST at once) sees
// the filled container, a self-referencing list cannot leak, and nothing is copied until the
// final conversion to JSON, which is where the depth and expansion limits are enforced.
#include "engine/import/pickle_reader.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/text/text_file.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::import {
namespace {

struct OpcodeName {
    std::uint8_t code;
    std::string_view name;
};

// Every opcode of pickle protocols 0-5, so a refused one is named in the error.
constexpr std::array<OpcodeName, 68> kOpcodeNames{{
    {0x28, "MARK"},
    {0x2e, "STOP"},
    {0x30, "POP"},
    {0x31, "POP_MARK"},
    {0x32, "DUP"},
    {0x46, "FLOAT"},
    {0x49, "INT"},
    {0x4a, "BININT"},
    {0x4b, "BININT1"},
    {0x4c, "LONG"},
    {0x4d, "BININT2"},
    {0x4e, "NONE"},
    {0x50, "PERSID"},
    {0x51, "BINPERSID"},
    {0x52, "REDUCE"},
    {0x53, "STRING"},
    {0x54, "BINSTRING"},
    {0x55, "SHORT_BINSTRING"},
    {0x56, "UNICODE"},
    {0x58, "BINUNICODE"},
    {0x61, "APPEND"},
    {0x62, "BUILD"},
    {0x63, "GLOBAL"},
    {0x64, "DICT"},
    {0x7d, "EMPTY_DICT"},
    {0x65, "APPENDS"},
    {0x67, "GET"},
    {0x68, "BINGET"},
    {0x69, "INST"},
    {0x6a, "LONG_BINGET"},
    {0x6c, "LIST"},
    {0x5d, "EMPTY_LIST"},
    {0x6f, "OBJ"},
    {0x70, "PUT"},
    {0x71, "BINPUT"},
    {0x72, "LONG_BINPUT"},
    {0x73, "SETITEM"},
    {0x74, "TUPLE"},
    {0x29, "EMPTY_TUPLE"},
    {0x75, "SETITEMS"},
    {0x47, "BINFLOAT"},
    {0x80, "PROTO"},
    {0x81, "NEWOBJ"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {0x42, "BINBYTES"},
    {0x43, "SHORT_BINBYTES"},
    {0x8c, "SHORT_BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"},
    {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
}};

std::string opcode_text(std::uint8_t code) {
    for (const OpcodeName& entry : kOpcodeNames)
        if (entry.code == code)
            return fmt::format("0x{:02x} ({})", code, entry.name);
    return fmt::format("0x{:02x}", code);
}

// Bytes of the unsigned little-endian length or memo index that follows a string, bytes or
// memo opcode: one for the SHORT_ and one-byte forms, eight for BINUNICODE8, else four.
std::size_t argument_width(std::uint8_t opcode) {
    switch (opcode) {
        case 0x8c:  // SHORT_BINUNICODE
        case 0x55:  // SHORT_BINSTRING
        case 0x43:  // SHORT_BINBYTES
        case 0x71:  // BINPUT
        case 0x68:  // BINGET
            return 1;
        case 0x8d:  // BINUNICODE8
            return 8;
        default:
            return 4;
    }
}

// Strict UTF-8 (no overlong forms, no surrogates), the same rule nlohmann::json applies when
// it writes a string, so a value read here can always be written out again.
bool valid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        std::size_t extra = 0;
        unsigned char low = 0x80, high = 0xbf;  // allowed range of the second byte
        if (lead < 0x80) {
            ++i;
            continue;
        } else if (lead >= 0xc2 && lead <= 0xdf) {
            extra = 1;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            extra = 2;
            low = lead == 0xe0 ? 0xa0 : 0x80;
            high = lead == 0xed ? 0x9f : 0xbf;
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            extra = 3;
            low = lead == 0xf0 ? 0x90 : 0x80;
            high = lead == 0xf4 ? 0x8f : 0xbf;
        } else {
            return false;
        }
        if (extra > text.size() - i - 1)
            return false;
        for (std::size_t k = 1; k <= extra; ++k) {
            const auto byte = static_cast<unsigned char>(text[i + k]);
            const unsigned char min = k == 1 ? low : 0x80, max = k == 1 ? high : 0xbf;
            if (byte < min || byte > max)
                return false;
        }
        i += extra + 1;
    }
    return true;
}

enum class NodeKind : std::uint8_t { none, boolean, integer, real, string, list, tuple, dict };

// One value. Containers hold node indices; a dict holds key, value, key, value, ...
struct Node {
    NodeKind kind = NodeKind::none;
    std::size_t offset = 0;  // where it was made, for errors found while converting
    std::int64_t integer = 0;
    double real = 0;
    std::string text;
    std::vector<std::size_t> items;
};

constexpr std::size_t kMostWaitingValues = std::size_t{1} << 16;
constexpr std::size_t kNodesBetweenMemoryChecks = std::size_t{1} << 16;
// A value's node, its place in a container and on the stack, and the vectors' slack.
constexpr std::size_t kBytesPerNode = 2 * sizeof(Node) + 2 * sizeof(std::size_t);

class Unpickler {
  public:
    Unpickler(std::string_view bytes, std::string_view file)
        : bytes_(bytes), file_(file), budget_(16 * bytes.size() + 1024) {}

    nlohmann::json run() {
        while (pos_ < bytes_.size()) {
            const std::size_t offset = pos_;
            const auto opcode = static_cast<std::uint8_t>(bytes_[pos_++]);
            if (opcode == 0x2e) {  // STOP
                const std::size_t root = pop(offset, opcode);
                return to_json(root, 0);
            }
            step(opcode, offset);
        }
        fail(bytes_.size(), "the pickle ends without a STOP opcode (truncated file?)");
    }

  private:
    [[noreturn]] void fail(std::size_t offset, const std::string& what) const {
        throw ImportError(fmt::format("{}: byte {}: {}", file_, offset, what));
    }

    // The next `count` bytes of the opcode at `offset`; fails when the input ends before them.
    std::string_view take(std::size_t count, std::uint8_t opcode, std::size_t offset) {
        const std::size_t left = bytes_.size() - pos_;
        if (count > left)
            fail(offset, fmt::format("the pickle ends inside opcode {}: it needs {} more bytes, "
                                     "{} are left (truncated file?)",
                                     opcode_text(opcode), count, left));
        const std::string_view part = bytes_.substr(pos_, count);
        pos_ += count;
        return part;
    }

    std::uint64_t unsigned_le(std::size_t count, std::uint8_t opcode, std::size_t offset) {
        const std::string_view part = take(count, opcode, offset);
        std::uint64_t value = 0;
        for (std::size_t i = count; i-- > 0;)
            value = (value << 8) | static_cast<unsigned char>(part[i]);
        return value;
    }

    std::size_t add(Node node) {
        if (nodes_.size() % kNodesBetweenMemoryChecks == 0)
            check_memory(node.offset);
        nodes_.push_back(std::move(node));
        return nodes_.size() - 1;
    }

    // The values read so far must fit half the memory there is, as a JSON document's must
    // (json_document.cpp): a pickle of small values can hold one in each byte.
    void check_memory(std::size_t offset) const {
        const auto needed = static_cast<std::int64_t>(nodes_.size() * kBytesPerNode);
        const std::int64_t available = available_memory_bytes();
        if (needed > available / 2)
            throw TextFileError(
                TextFileError::Problem::too_large,
                fmt::format("{}: byte {}: the pickle's {} values so far need about {} to read, "
                            "and {} of memory is available",
                            file_, offset, nodes_.size(), format_bytes(needed),
                            format_bytes(available)));
    }

    std::size_t add_integer(std::int64_t value, std::size_t offset) {
        Node node{NodeKind::integer, offset, value, 0, {}, {}};
        return add(std::move(node));
    }

    // Python's pickler fills a list, dict or set in batches of 1000 after a MARK, so what waits
    // on the stack at once stays small in any real dump; a file of bare values that pile up
    // (18 MB of EMPTY_LIST once took 3 GB before failing) is refused as soon as it passes that.
    void push(std::size_t node) {
        if (stack_.size() >= kMostWaitingValues)
            fail(nodes_[node].offset,
                 fmt::format("more than {} values wait on the pickle stack at once: not a dump "
                             "(Python's pickler fills containers 1000 items at a time)",
                             kMostWaitingValues));
        stack_.push_back(node);
    }

    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }

    std::size_t pop(std::size_t offset, std::uint8_t opcode) {
        if (stack_.size() <= floor())
            fail(offset, fmt::format("opcode {} needs a value but the stack is empty",
                                     opcode_text(opcode)));
        const std::size_t node = stack_.back();
        stack_.pop_back();
        return node;
    }

    std::size_t top(std::size_t offset, std::uint8_t opcode) {
        if (stack_.size() <= floor())
            fail(offset, fmt::format("opcode {} needs a value but the stack is empty",
                                     opcode_text(opcode)));
        return stack_.back();
    }

    std::vector<std::size_t> pop_to_mark(std::size_t offset, std::uint8_t opcode) {
        if (marks_.empty())
            fail(offset, fmt::format("opcode {} without a MARK before it", opcode_text(opcode)));
        const std::size_t mark = marks_.back();
        marks_.pop_back();
        std::vector<std::size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                       stack_.end());
        stack_.resize(mark);
        return items;
    }

    Node& container(std::size_t node, NodeKind kind, std::size_t offset, std::uint8_t opcode) {
        if (nodes_[node].kind != kind)
            fail(offset,
                 fmt::format("opcode {} applied to a value that is not a {}", opcode_text(opcode),
                             kind == NodeKind::dict ? "dict" : "list"));
        return nodes_[node];
    }

    void add_string(std::size_t length, bool check_utf8, std::uint8_t opcode, std::size_t offset) {
        const std::string_view text = take(length, opcode, offset);
        if (check_utf8 && !valid_utf8(text))
            fail(offset,
                 fmt::format("opcode {}: the string is not valid UTF-8", opcode_text(opcode)));
        Node node{NodeKind::string, offset, 0, 0, std::string(text), {}};
        push(add(std::move(node)));
    }

    void add_sequence(NodeKind kind, std::vector<std::size_t> items, std::size_t offset) {
        Node node{kind, offset, 0, 0, {}, std::move(items)};
        push(add(std::move(node)));
    }

    void memo_put(std::uint64_t index, std::size_t offset, std::uint8_t opcode) {
        memo_[index] = top(offset, opcode);
    }

    void memo_get(std::uint64_t index, std::size_t offset, std::uint8_t opcode) {
        const auto found = memo_.find(index);
        if (found == memo_.end())
            fail(offset, fmt::format("opcode {} reads memo entry {}, which was never stored "
                                     "({} are)",
                                     opcode_text(opcode), index, memo_.size()));
        push(found->second);
    }

    std::int64_t long1(std::size_t count, std::uint8_t opcode, std::size_t offset) {
        if (count > 8)
            fail(offset, fmt::format("opcode {}: a {}-byte integer is wider than 64 bits",
                                     opcode_text(opcode), count));
        if (count == 0)
            return 0;
        std::uint64_t value = unsigned_le(count, opcode, offset);
        const bool negative = (value >> (8 * count - 1)) & 1;
        if (negative && count < 8)
            value |= ~std::uint64_t{0} << (8 * count);  // sign-extend
        return static_cast<std::int64_t>(value);
    }

    void step(std::uint8_t opcode, std::size_t offset);
    void step_container(std::uint8_t opcode, std::size_t offset);
    nlohmann::json to_json(std::size_t node, std::size_t depth);

    std::string_view bytes_;
    std::string_view file_;
    std::size_t pos_ = 0;
    std::size_t budget_;  // values and string bytes the JSON may hold: shared references
                          // cannot expand past it
    std::vector<Node> nodes_;
    std::vector<std::size_t> stack_;
    std::vector<std::size_t> marks_;  // stack sizes at each open MARK
    std::unordered_map<std::uint64_t, std::size_t> memo_;
};

void Unpickler::step(std::uint8_t opcode, std::size_t offset) {
    switch (opcode) {
        case 0x80: {  // PROTO
            const auto version = unsigned_le(1, opcode, offset);
            if (version > 5)
                fail(offset, fmt::format("pickle protocol {} is newer than this reader knows "
                                         "(up to 5)",
                                         version));
            return;
        }
        case 0x95: {  // FRAME: only a length; the opcodes inside are read as usual
            const auto length = unsigned_le(8, opcode, offset);
            if (length > bytes_.size() - pos_)
                fail(offset, fmt::format("a pickle frame of {} bytes runs past the end of the "
                                         "file ({} bytes left; truncated file?)",
                                         length, bytes_.size() - pos_));
            return;
        }
        case 0x28:  // MARK
            if (marks_.size() >= kMaxPickleDepth)
                fail(offset, fmt::format("MARKs nested deeper than {}: not a dump (deeper than "
                                         "any value is read)",
                                         kMaxPickleDepth));
            marks_.push_back(stack_.size());
            return;
        case 0x4e:  // NONE
            push(add(Node{NodeKind::none, offset, 0, 0, {}, {}}));
            return;
        case 0x88:  // NEWTRUE
        case 0x89:  // NEWFALSE
            push(add(Node{NodeKind::boolean, offset, opcode == 0x88 ? 1 : 0, 0, {}, {}}));
            return;
        case 0x4b:  // BININT1
            push(add_integer(static_cast<std::int64_t>(unsigned_le(1, opcode, offset)), offset));
            return;
        case 0x4d:  // BININT2
            push(add_integer(static_cast<std::int64_t>(unsigned_le(2, opcode, offset)), offset));
            return;
        case 0x4a:  // BININT: signed 32 bits
            push(add_integer(static_cast<std::int32_t>(unsigned_le(4, opcode, offset)), offset));
            return;
        case 0x8a: {  // LONG1
            const auto count = unsigned_le(1, opcode, offset);
            push(add_integer(long1(count, opcode, offset), offset));
            return;
        }
        case 0x47: {  // BINFLOAT: big-endian IEEE double
            const std::string_view part = take(8, opcode, offset);
            std::uint64_t bits = 0;
            for (const char byte : part)
                bits = (bits << 8) | static_cast<unsigned char>(byte);
            push(add(Node{NodeKind::real, offset, 0, std::bit_cast<double>(bits), {}, {}}));
            return;
        }
        case 0x58:  // BINUNICODE
        case 0x8c:  // SHORT_BINUNICODE
        case 0x8d:  // BINUNICODE8
        case 0x55:  // SHORT_BINSTRING
        case 0x43:  // SHORT_BINBYTES
        case 0x42:  // BINBYTES
            add_string(unsigned_le(argument_width(opcode), opcode, offset), true, opcode, offset);
            return;
        case 0x54: {  // BINSTRING: signed 32-bit length
            const auto length = static_cast<std::int32_t>(unsigned_le(4, opcode, offset));
            if (length < 0)
                fail(offset, fmt::format("opcode {} has a negative length {}", opcode_text(opcode),
                                         length));
            add_string(static_cast<std::size_t>(length), true, opcode, offset);
            return;
        }
        case 0x71:  // BINPUT
        case 0x72:  // LONG_BINPUT
            memo_put(unsigned_le(argument_width(opcode), opcode, offset), offset, opcode);
            return;
        case 0x94:  // MEMOIZE: the next free index
            memo_put(memo_.size(), offset, opcode);
            return;
        case 0x68:  // BINGET
        case 0x6a:  // LONG_BINGET
            memo_get(unsigned_le(argument_width(opcode), opcode, offset), offset, opcode);
            return;
        default:
            step_container(opcode, offset);
    }
}

void Unpickler::step_container(std::uint8_t opcode, std::size_t offset) {
    switch (opcode) {
        case 0x7d:  // EMPTY_DICT
            add_sequence(NodeKind::dict, {}, offset);
            return;
        case 0x5d:  // EMPTY_LIST
            add_sequence(NodeKind::list, {}, offset);
            return;
        case 0x29:  // EMPTY_TUPLE
            add_sequence(NodeKind::tuple, {}, offset);
            return;
        case 0x85:    // TUPLE1
        case 0x86:    // TUPLE2
        case 0x87: {  // TUPLE3
            std::vector<std::size_t> items(opcode - 0x84u);
            for (std::size_t i = items.size(); i-- > 0;)
                items[i] = pop(offset, opcode);
            add_sequence(NodeKind::tuple, std::move(items), offset);
            return;
        }
        case 0x74:  // TUPLE
            add_sequence(NodeKind::tuple, pop_to_mark(offset, opcode), offset);
            return;
        case 0x6c:  // LIST
            add_sequence(NodeKind::list, pop_to_mark(offset, opcode), offset);
            return;
        case 0x64: {  // DICT
            std::vector<std::size_t> items = pop_to_mark(offset, opcode);
            if (items.size() % 2 != 0)
                fail(offset, "opcode 0x64 (DICT) has a key without a value");
            add_sequence(NodeKind::dict, std::move(items), offset);
            return;
        }
        case 0x61: {  // APPEND
            const std::size_t value = pop(offset, opcode);
            container(top(offset, opcode), NodeKind::list, offset, opcode).items.push_back(value);
            return;
        }
        case 0x65: {  // APPENDS
            const std::vector<std::size_t> values = pop_to_mark(offset, opcode);
            Node& list = container(top(offset, opcode), NodeKind::list, offset, opcode);
            list.items.insert(list.items.end(), values.begin(), values.end());
            return;
        }
        case 0x73: {  // SETITEM
            const std::size_t value = pop(offset, opcode);
            const std::size_t key = pop(offset, opcode);
            Node& dict = container(top(offset, opcode), NodeKind::dict, offset, opcode);
            dict.items.push_back(key);
            dict.items.push_back(value);
            return;
        }
        case 0x75: {  // SETITEMS
            const std::vector<std::size_t> values = pop_to_mark(offset, opcode);
            if (values.size() % 2 != 0)
                fail(offset, "opcode 0x75 (SETITEMS) has a key without a value");
            Node& dict = container(top(offset, opcode), NodeKind::dict, offset, opcode);
            dict.items.insert(dict.items.end(), values.begin(), values.end());
            return;
        }
        default:
            fail(offset, fmt::format("pickle opcode {} is not allowed in a flight-recorder dump",
                                     opcode_text(opcode)));
    }
}

nlohmann::json Unpickler::to_json(std::size_t index, std::size_t depth) {
    const Node& node = nodes_[index];
    if (depth > kMaxPickleDepth)
        fail(node.offset, fmt::format("values nest deeper than {} levels", kMaxPickleDepth));
    // A value costs one unit and a string one more per byte: a string stored once and referenced
    // many times would otherwise be copied into the JSON once per reference.
    const std::size_t cost = 1 + (node.kind == NodeKind::string ? node.text.size() : 0);
    if (cost > budget_)
        fail(node.offset,
             "shared references expand to more data than the file could hold "
             "(a crafted pickle?)");
    budget_ -= cost;
    switch (node.kind) {
        case NodeKind::none:
            return nullptr;
        case NodeKind::boolean:
            return node.integer != 0;
        case NodeKind::integer:
            return node.integer;
        case NodeKind::real:
            return node.real;
        case NodeKind::string:
            return node.text;
        case NodeKind::list:
        case NodeKind::tuple: {
            nlohmann::json array = nlohmann::json::array();
            for (const std::size_t item : node.items)  // converting never changes nodes_
                array.push_back(to_json(item, depth + 1));
            return array;
        }
        case NodeKind::dict: {
            nlohmann::json object = nlohmann::json::object();
            const std::vector<std::size_t>& items = node.items;
            for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
                nlohmann::json key = to_json(items[i], depth + 1);
                const std::string name = key.is_string() ? key.get<std::string>() : key.dump();
                object[name] = to_json(items[i + 1], depth + 1);
            }
            return object;
        }
    }
    return nullptr;
}

}  // namespace

nlohmann::json read_pickle(std::string_view bytes, std::string_view file_name) {
    return Unpickler(bytes, file_name).run();
}

}  // namespace pipelens::import
