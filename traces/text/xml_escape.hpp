// Text made safe for XML and SVG (element text and double-quoted attributes): the JUnit report,
// the sweep picture and the timeline picture escape the same way. Header-only.
//
// It lives with the trace store (layer 0, which depends on nothing of ours) because the timeline
// picture escapes with it; every layer above includes it from here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pipelens {

// The length of the well-formed UTF-8 sequence at text[at], 0 when none starts there.
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80)
        return 1;
    const std::size_t length = lead >= 0xF5                   ? 0
                               : lead >= 0xF0                 ? 4
                               : lead >= 0xE0                 ? 3
                               : lead >= 0xC2 && lead <= 0xDF ? 2
                                                              : 0;
    if (length == 0 || at + length > text.size())
        return 0;
    for (std::size_t i = 1; i < length; ++i)
        if ((byte(at + i) & 0xC0) != 0x80)
            return 0;
    const unsigned char second = byte(at + 1);
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
        (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F))
        return 0;  // overlong, a surrogate, or past U+10FFFF
    if (length == 3 && lead == 0xEF && second == 0xBF && byte(at + 2) >= 0xBE)
        return 0;  // U+FFFE and U+FFFF: well-formed, but no character XML may hold
    return length;
}

// What XML 1.0 cannot hold even escaped (control characters but tab and line ends) and bytes
// that are not UTF-8 (a file name in another encoding) become U+FFFD, so the document parses.
inline std::string xml_escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const char c = text[at];
        const std::size_t length = utf8_sequence_length(text, at);
        if (length == 0 ||
            (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
            out += "\xEF\xBF\xBD";
            ++at;
            continue;
        }
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out.append(text.substr(at, length));
        }
        at += length;
    }
    return out;
}

}  // namespace pipelens
