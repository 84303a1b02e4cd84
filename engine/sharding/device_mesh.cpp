// Mesh geometry and text.
#include "engine/sharding/device_mesh.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/text/printable.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::sharding {
namespace {

// The device count is an int everywhere (ranks, coordinates); found by fuzzing to overflow.
constexpr std::int64_t kMaxDevices = 1 << 20;
// Strategies multiply per mesh dim (an mm has 4^ndim, each priced against every producer
// strategy): a block takes 0.1 s on 4 dims, 1.3 s on 6, minutes on 8 (found by fuzzing).
// Five covers the largest meshes in use (pp, dp_replicate, dp_shard, cp, tp).
constexpr int kMaxDims = 5;

std::string tuple_text(const std::vector<int>& values) {
    if (values.size() == 1)
        return fmt::format("({},)", values[0]);
    return fmt::format("({})", fmt::join(values, ", "));
}

// Reads to_string's text left to right. Whatever does not fit is one error naming the whole
// text: a trace's mesh column is shown to people, who need the text rather than a position.
class PrintedMeshReader {
  public:
    explicit PrintedMeshReader(std::string_view text) : text_(text) {}

    bool take(std::string_view token) {
        skip_spaces();
        if (!text_.substr(at_).starts_with(token))
            return false;
        at_ += token.size();
        return true;
    }
    void expect(std::string_view token) {
        if (!take(token))
            fail();
    }
    // A run of the characters of a plain name (is_plain_name), at least one.
    std::string_view word() {
        skip_spaces();
        const std::size_t start = at_;
        while (at_ < text_.size() && is_plain_name(text_.substr(at_, 1)))
            ++at_;
        if (at_ == start)
            fail();
        return text_.substr(start, at_ - start);
    }
    // Everything up to `end` (taken, not returned).
    std::string_view up_to(char end) {
        const std::size_t found = text_.find(end, at_);
        if (found == std::string_view::npos)
            fail();
        const std::string_view part = text_.substr(at_, found - at_);
        at_ = found + 1;
        return part;
    }
    int number() { return number_of(word()); }
    int number_of(std::string_view digits) const {
        int value = 0;
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || end != digits.data() + digits.size())
            fail();
        return value;
    }
    // "(a, b)", "(a,)" or "(a)": calls `element` for each, which reads one.
    template <class Element>
    void tuple(Element&& element) {
        expect("(");
        for (;;) {
            element();
            if (take(")"))
                return;
            expect(",");
            if (take(")"))  // "(4,)": Python's tuple of one
                return;
        }
    }
    bool at_end() {
        skip_spaces();
        return at_ == text_.size();
    }
    [[noreturn]] void fail() const {
        throw std::invalid_argument(
            fmt::format("'{}': expected a mesh as printed, e.g. \"DeviceMesh((dp=2, tp=4), 'cuda', "
                        "stride=(4, 1))\" or \"DeviceMesh((4,), 'cuda', stride=(1,))\"",
                        text_));
    }

  private:
    void skip_spaces() {
        while (at_ < text_.size() && text_[at_] == ' ')
            ++at_;
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

}  // namespace

int DeviceMesh::size() const {
    int total = 1;
    for (int extent : shape)
        total *= extent;
    return total;
}

std::vector<int> DeviceMesh::stride() const {
    std::vector<int> strides(shape.size(), 1);
    for (int dim = ndim() - 2; dim >= 0; --dim)
        strides[dim] = strides[dim + 1] * shape[dim + 1];
    return strides;
}

std::vector<int> DeviceMesh::coordinate_of(int device) const {
    std::vector<int> coordinate(shape.size());
    for (int dim = ndim() - 1; dim >= 0; --dim) {
        coordinate[dim] = device % shape[dim];
        device /= shape[dim];
    }
    return coordinate;
}

std::string to_string(const DeviceMesh& mesh) {
    std::string dims;
    if (mesh.dim_names.empty()) {
        dims = tuple_text(mesh.shape);
    } else {
        std::vector<std::string> named;
        for (int dim = 0; dim < mesh.ndim(); ++dim)
            named.push_back(fmt::format("{}={}", mesh.dim_names[dim], mesh.shape[dim]));
        dims = fmt::format("({})", fmt::join(named, ", "));
    }
    return fmt::format("DeviceMesh({}, '{}', stride={})", dims, mesh.device_type,
                       tuple_text(mesh.stride()));
}

int default_devices_per_host(std::string_view device_type) {
    return device_type == "cpu" ? 1 : 8;
}

DeviceMesh parse_device_mesh(std::string_view text, std::string device_type, int devices_per_host) {
    DeviceMesh mesh;
    mesh.device_type = std::move(device_type);
    mesh.devices_per_host = devices_per_host;
    std::int64_t devices = 1;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string_view part = text.substr(at, comma - at);
        const std::size_t equals = part.find('=');
        int size = 0;
        const std::string_view name =
            equals == std::string_view::npos ? "" : part.substr(0, equals);
        const std::string_view digits =
            equals == std::string_view::npos ? part : part.substr(equals + 1);
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), size);
        if (!is_plain_name(name) || error != std::errc() || end != digits.data() + digits.size() ||
            size < 1)
            throw std::invalid_argument(fmt::format(
                "--mesh '{}': expected NAME=SIZE[,NAME=SIZE...] with sizes of at least 1, e.g. "
                "'dp=2,tp=4'",
                text));
        if (mesh.ndim() == kMaxDims)
            throw std::invalid_argument(
                fmt::format("--mesh '{}': more than {} dimensions", text, kMaxDims));
        devices *= size;
        if (devices > kMaxDevices)
            throw std::invalid_argument(
                fmt::format("--mesh '{}': more than {} devices", text, kMaxDevices));
        // Placements name mesh dims: two of one name would make them ambiguous.
        if (std::find(mesh.dim_names.begin(), mesh.dim_names.end(), name) != mesh.dim_names.end())
            throw std::invalid_argument(
                fmt::format("--mesh '{}': dimension '{}' is named twice", text, name));
        mesh.dim_names.emplace_back(name);
        mesh.shape.push_back(size);
        at = comma + 1;
    }
    // Printed back into schemas and JSON: a plain name, as dtypes and mesh dims are.
    if (!is_plain_name(mesh.device_type))
        throw std::invalid_argument(
            fmt::format("--device-type '{}': a device type is a plain name (letters, digits, "
                        "'_'), such as cuda or cpu",
                        shown_text(mesh.device_type, 40)));
    if (devices_per_host < 1)
        throw std::invalid_argument(
            fmt::format("--devices-per-host {}: needs at least 1", devices_per_host));
    return mesh;
}

DeviceMesh parse_printed_device_mesh(std::string_view text) {
    PrintedMeshReader reader(text);
    DeviceMesh mesh;
    std::int64_t devices = 1;
    bool named = false;
    reader.expect("DeviceMesh(");
    reader.tuple([&] {
        const std::string_view first = reader.word();
        const bool has_name = reader.take("=");
        if (mesh.ndim() > 0 && has_name != named)
            reader.fail();  // to_string names every dim or none
        named = has_name;
        const int size = has_name ? reader.number() : reader.number_of(first);
        if (size < 1 || mesh.ndim() == kMaxDims)
            reader.fail();
        devices *= size;
        if (devices > kMaxDevices)
            reader.fail();
        if (has_name)
            mesh.dim_names.emplace_back(first);
        mesh.shape.push_back(size);
    });
    if (reader.take(",")) {
        reader.expect("'");
        mesh.device_type = std::string(reader.up_to('\''));
        if (!is_plain_name(mesh.device_type))
            reader.fail();
        if (reader.take(",")) {
            reader.expect("stride=");
            std::vector<int> stride;
            reader.tuple([&] { stride.push_back(reader.number()); });
            if (stride != mesh.stride())
                reader.fail();
        }
    }
    reader.expect(")");
    if (!reader.at_end())
        reader.fail();
    return mesh;
}

}  // namespace pipelens::sharding
