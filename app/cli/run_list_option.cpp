// Run lists as options (run_list_option.hpp).
#include "app/cli/run_list_option.hpp"

#include <cstddef>

#include "app/cli/validators.hpp"

namespace pipelens::cli {
namespace {

std::vector<std::string> entries_of(const std::string& list) {
    std::vector<std::string> entries;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = list.find(',', start);
        entries.push_back(list.substr(start, comma - start));
        if (comma == std::string::npos)
            return entries;
        start = comma + 1;
    }
}

// "" when every entry of `list` is a run id, else why not.
std::string refusal(const std::string& list) {
    const std::vector<std::string> entries = entries_of(list);
    for (const std::string& entry : entries)
        if (entry.empty())
            return list.empty() ? "an empty value names no run"
                                : "'" + list + "' has an empty entry (list runs as 1,2,3)";
    const CLI::Validator number = int64_number();
    for (std::string entry : entries)
        if (std::string why = number(entry); !why.empty())
            return why;
    return "";
}

}  // namespace

CLI::Option* add_run_list_option(CLI::App& command, const std::string& name,
                                 std::vector<std::int64_t>& runs, const std::string& description) {
    return command
        .add_option_function<std::vector<std::string>>(
            name,
            [&runs](const std::vector<std::string>& lists) {
                runs.clear();
                for (const std::string& list : lists)
                    for (const std::string& entry : entries_of(list))
                        runs.push_back(std::stoll(entry));
            },
            description)
        // One list per occurrence: CLI11 would otherwise also take "--run 1 2" and read
        // "[1,,2]" as a list of its own, dropping the empty entry.
        ->allow_extra_args(false)
        ->check(CLI::Validator(refusal, ""))
        ->type_name("N[,N...]");
}

}  // namespace pipelens::cli
