// Text made safe for XML and SVG (element text and double-quoted attributes): the JUnit report,
// the sweep picture and the timeline picture escape the same way. Header-only.
//
// It lives with the trace store (layer 0, which depends on nothing of ours) because the timeline
// picture escapes with it; every layer above includes it from here.
#pragma once

#include <string>
#include <string_view>

namespace pipelens {

inline std::string xml_escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
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
                out += c;
        }
    }
    return out;
}

}  // namespace pipelens
