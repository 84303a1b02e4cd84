// Whole-number options read in decimal, as a user writes them. CLI11 converts an integer with
// strtoll's base 0, so "--sim-run 010" named run 8 (octal), "--steps 0x10" ran 16 steps and
// "--steps 08" was refused as no integer. Every integer option of a command line gets a
// transform that drops leading zeros ("010" is 10) and refuses the C prefixes ("0x10").
// Shared by `pipelens`, `pipelens-runtime` and `pipelens-view`; depends on CLI11 only. It lives
// beside the viewer's options because app/cli already includes those (`pipelens view`), the one
// direction between the two folders.
#pragma once

#include <cctype>
#include <string>

#include <CLI/CLI.hpp>

namespace pipelens::viewer {

// "" when `text` is now a plain decimal integer (leading zeros dropped), else why not. Text
// that is no number at all is left for the conversion to refuse with its own message.
inline std::string to_plain_decimal(std::string& text) {
    const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    std::size_t first = sign;
    while (first + 1 < text.size() && text[first] == '0' &&
           std::isdigit(static_cast<unsigned char>(text[first + 1])) != 0)
        ++first;
    if (first + 1 < text.size() && text[first] == '0' &&
        std::isalpha(static_cast<unsigned char>(text[first + 1])) != 0)
        return text + " is not a decimal integer";
    text.erase(sign, first - sign);
    return "";
}

// Adds the transform to every option of `app` and of its subcommands, at any depth, whose
// type is an integer (CLI11 names it INT or UINT, with or without a ":..." suffix).
inline void read_integers_as_decimal(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        const std::string type = option->get_type_name();
        const std::string kind = type.substr(0, type.find(':'));
        if (kind == "INT" || kind == "UINT")
            option->transform(CLI::Validator(to_plain_decimal, ""));
    }
    for (CLI::App* command : app.get_subcommands({}))
        read_integers_as_decimal(*command);
}

}  // namespace pipelens::viewer
