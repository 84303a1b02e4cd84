"""Shell completion for `pipelens` and `pipelens-view`, written from their parsed help
(cli_help.Help): bash (a `complete -F` function) and zsh (a `#compdef` function for _arguments).
Both complete the commands, each command's options, the values an option lists (schedule kinds,
--format's choices) and files where an argument is a file: traces (*.db) for an argument whose
help says it is a trace, experiments (*.toml), schedules (*.csv).

Invariants: every name comes from the help text; the bash script uses only bash builtins
(compgen), not the bash-completion package's helpers, so it works wherever it is sourced.
"""
import re

# A positional's files, by what its help says it is: the first pattern that matches decides.
POSITIONAL_FILES = [
    (re.compile(r"results files", re.I), ""),
    (re.compile(r"\btrace", re.I), "*.db"),
    (re.compile(r"\bTOML\b"), "*.toml"),
    (re.compile(r"\bCSV\b"), "*.csv"),
]


def file_pattern(entry):
    """The glob a positional's files match ("*.db"), "" for any file."""
    for pattern, glob in POSITIONAL_FILES:
        if pattern.search(entry.description):
            return glob
    return ""


def option_names(command_help):
    return [name for entry in command_help.options for name in entry.names]


def value_words(command_help):
    """{option name: [values]} for options that list their values."""
    return {name: entry.choices for entry in command_help.options if entry.choices
            for name in entry.names}


def takes_number(entry):
    return entry.type.split(" ")[0] in ("INT", "FLOAT", "UINT")


def bash_case_for(command_help):
    """The body of one command's branch: values after an option, options, then positionals."""
    lines = ['            case "$prev" in']
    for name, values in sorted(value_words(command_help).items()):
        lines.append(f'                {name}) COMPREPLY=($(compgen -W "{" ".join(values)}" '
                     '-- "$cur")); return ;;')
    numbers = [name for entry in command_help.options if takes_number(entry)
               for name in entry.names]
    if numbers:
        lines.append(f'                {"|".join(numbers)}) return ;;')
    files = [name for entry in command_help.options if entry.takes_value and
             not takes_number(entry) and not entry.choices for name in entry.names]
    if files:
        lines.append(f'                {"|".join(files)}) COMPREPLY=($(compgen -f -- "$cur")); '
                     'return ;;')
    lines.append("            esac")
    lines.append(f'            options="{" ".join(option_names(command_help))}"')
    globs = sorted({file_pattern(entry) for entry in command_help.positionals})
    glob = globs[0] if len(globs) == 1 else ""
    lines.append(f'            glob="{glob}"')
    return lines


def bash(helps):
    main = helps[("pipelens",)]
    commands = [entry.names[0] for entry in main.subcommands]
    lines = [
        "# bash completion for pipelens and pipelens-view, generated from their --help when",
        "# pipelens is built (scripts/packaging/completion.py).",
        "_pipelens_files() {",
        '    # Directories, and the files that match $1 (every file when $1 is empty).',
        '    local IFS=$\'\\n\'',
        '    COMPREPLY=($(compgen -d -- "$2"))',
        '    if [[ -n $1 ]]; then',
        '        COMPREPLY+=($(compgen -f -X "!$1" -- "$2"))',
        "    else",
        '        COMPREPLY+=($(compgen -f -- "$2"))',
        "    fi",
        "}",
        "",
        "_pipelens() {",
        '    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
        '    local command="" options="" glob="" i',
        '    if [[ ${COMP_WORDS[0]##*/} == pipelens-view ]]; then',
        "        command=pipelens-view",
        "    else",
        "        for ((i = 1; i < COMP_CWORD; i++)); do",
        '            [[ ${COMP_WORDS[i]} != -* ]] && { command=${COMP_WORDS[i]}; break; }',
        "        done",
        "    fi",
        '    case "$command" in',
        '        "")',
        f'            COMPREPLY=($(compgen -W "{" ".join(commands + option_names(main))}" '
        '-- "$cur"))',
        "            return ;;",
    ]
    for words, command_help in helps.items():
        if len(words) == 1 and words[0] == "pipelens":
            continue
        lines.append(f"        {words[-1]})")
        lines += bash_case_for(command_help)
        lines.append("            ;;")
    lines += [
        "        *) return ;;",
        "    esac",
        '    if [[ $cur == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
        "    else",
        '        _pipelens_files "$glob" "$cur"',
        "    fi",
        "}",
        "complete -o filenames -F _pipelens pipelens pipelens-view",
    ]
    return "\n".join(lines) + "\n"


def zsh_quote(text):
    """`text` inside an _arguments spec's [description], single-quoted."""
    text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")
    return text.replace("'", "'\\''")


def zsh_option(entry):
    description = zsh_quote(entry.description)
    action = ""
    if entry.choices:
        action = f":value:({' '.join(entry.choices)})"
    elif takes_number(entry):
        action = ":number: "
    elif entry.takes_value:
        action = ":file:_files"
    repeat = "*" if "..." in entry.type else ""
    names = entry.names
    if len(names) == 1:
        return f"'{repeat}{names[0]}[{description}]{action}'"
    exclusive = " ".join(names)
    return f"'({exclusive})'{{{','.join(names)}}}'[{description}]{action}'"


def zsh_positional(entry, position):
    glob = file_pattern(entry)
    action = f"_files -g '\\''{glob}'\\''" if glob else "_files"
    slot = "*" if "..." in entry.type else str(position)
    return f"'{slot}:{zsh_quote(entry.names[0])}:{action}'"


def zsh_specs(command_help):
    specs = [zsh_option(entry) for entry in command_help.options]
    specs += [zsh_positional(entry, position)
              for position, entry in enumerate(command_help.positionals, 1)]
    return " \\\n            ".join(specs)


def zsh(helps):
    main = helps[("pipelens",)]
    lines = [
        "#compdef pipelens pipelens-view",
        "# zsh completion for pipelens and pipelens-view, generated from their --help when",
        "# pipelens is built (scripts/packaging/completion.py).",
        "",
        "_pipelens() {",
        "    local curcontext=$curcontext state line",
        "    local -A opt_args",
        "    if [[ $service == pipelens-view ]]; then",
    ]
    if ("pipelens-view",) in helps:
        lines.append(f"        _arguments -s {zsh_specs(helps[('pipelens-view',)])}")
    lines += [
        "        return",
        "    fi",
        "    local -a commands",
        "    commands=(",
    ]
    for entry in main.subcommands:
        # _describe splits at the first colon: the description may hold more.
        description = entry.description.replace("'", "'\\''")
        lines.append(f"        '{entry.names[0]}:{description}'")
    lines += [
        "    )",
        f"    _arguments -C {zsh_specs(main)} \\",
        "        '1:command:->command' '*::argument:->argument'",
        "    case $state in",
        "        command) _describe -t commands 'pipelens command' commands ;;",
        "        argument)",
        "            case $words[1] in",
    ]
    for words, command_help in helps.items():
        if len(words) != 2:
            continue
        lines.append(f"                {words[1]}) _arguments -s {zsh_specs(command_help)} ;;")
    lines += [
        "            esac ;;",
        "    esac",
        "}",
        "",
        '_pipelens "$@"',
    ]
    return "\n".join(lines) + "\n"
