// ActionText: the text of one action, made when it is asked for. A run of ten million actions
// keeps no string per action (deriving them all at load cost seconds and a quarter of a GiB):
// a plain action's text ("2F5", "0SEND_F3") is formatted from its integers on demand, only an
// OVERLAP_F_B's, which the trace stores, is looked up.
//
// Invariant: data() is NUL-terminated; a view never points into a moved-from ActionText (the
// owned text is viewed afresh on every call).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace pipelens::viewer {

class ActionText {
  public:
    // Text a table owns and outlives this value (NUL-terminated).
    static ActionText stored(std::string_view text) {
        ActionText result;
        result.stored_ = text;
        return result;
    }
    static ActionText owned(std::string text) {
        ActionText result;
        result.owned_ = std::move(text);
        return result;
    }

    std::string_view view() const { return stored_.data() ? stored_ : std::string_view(owned_); }
    const char* data() const { return stored_.data() ? stored_.data() : owned_.c_str(); }
    operator std::string_view() const { return view(); }

    friend bool operator==(const ActionText& left, std::string_view right) {
        return left.view() == right;
    }
    friend bool operator==(const ActionText& left, const ActionText& right) {
        return left.view() == right.view();
    }
    friend std::ostream& operator<<(std::ostream& out, const ActionText& text) {
        return out << text.view();
    }

  private:
    std::string_view stored_;
    std::string owned_;
};

}  // namespace pipelens::viewer
