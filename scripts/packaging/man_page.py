"""A man page (roff, man(7) macros) from a command's parsed help (cli_help.Help): NAME and
SYNOPSIS from the help's description and usage, one section per help section, SEE ALSO linking
the main page and the command pages.

Invariants: every word comes from the help text; text is escaped so that no line starts a roff
request by accident and option names keep real hyphens (\\-), so `man` copies and searches them
as typed; no date, so the pages are reproducible.
"""
import re


def inline(text):
    """`text` inside a line: only backslashes need escaping."""
    return text.replace("\\", "\\e")


def escape(text):
    """`text` as a line of roff prose: backslashes escaped, a leading . or ' neutralised."""
    text = inline(text)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def literal(text):
    """An option or command name, hyphens as minus signs."""
    return escape(text).replace("-", "\\-")


def page_name(words):
    return "-".join(words)


def entry_lines(entry, positional):
    names = ", ".join(f"\\fB{literal(name)}\\fR" for name in entry.names)
    if positional:
        names = f"\\fI{literal(entry.names[0])}\\fR"
        # "TEXT:FILE ... REQUIRED" reads "files ... (required)": a name says enough.
        kind = re.sub(r"^TEXT(:FILE)?", "", entry.type.replace("REQUIRED", "").strip()).strip()
        kind = f" {inline(kind)}" if kind else ""
        required = " (required)" if "REQUIRED" in entry.type else ""
        return [".TP", f"{names}{kind}{required}", escape(entry.description)]
    kind = f" \\fI{escape(entry.type)}\\fR" if entry.type else ""
    return [".TP", f"{names}{kind}", escape(entry.description)]


def command_lines(words, command, helps):
    full = (*words, command.names[0])
    lines = [".TP", f"\\fB{literal(command.names[0])}\\fR", escape(command.description)]
    if full in helps:
        lines[-1] += f" (\\fB{literal(page_name(full))}\\fR(1))"
    return lines


HEADINGS = {"Positionals": ".SH ARGUMENTS", "Options": ".SH OPTIONS",
            "Subcommands": ".SH COMMANDS"}


def see_also(words, helps):
    """The main page from every other page; the viewer's page from the main one and `view`'s."""
    pages = [] if words == ("pipelens",) else [("pipelens",)]
    if ("pipelens-view",) in helps and words in (("pipelens",), ("pipelens", "view")):
        pages.append(("pipelens-view",))
    return [page_name(page) for page in pages]


def man_page(words, command_help, helps, version):
    """The page for the command `words` (("pipelens", "simulate")); `helps`: every command's
    Help, for the cross references; `version`: what `pipelens --version` prints."""
    name = page_name(words)
    # "pipelens-view: the pipelens trace viewer" names itself; NAME says it once.
    description = escape(command_help.description.removeprefix(f"{name}: "))
    lines = [
        f".\\\" {name}(1), generated from `{' '.join(words)} --help` when pipelens is built",
        f'.TH {literal(name.upper())} 1 "" "{escape(version)}" "User Commands"',
        ".SH NAME",
        f"{literal(name)} \\- {description}",
        ".SH SYNOPSIS",
        f"\\fB{literal(' '.join(words))}\\fR {escape(command_help.usage)}",
        ".SH DESCRIPTION",
        description,
    ]
    for title, entries in command_help.sections:
        # Option groups ("Transformer (...)") are subsections of OPTIONS, which CLI11 prints first.
        lines.append(HEADINGS.get(title, f".SS {escape(title)}"))
        for entry in entries:
            if title == "Subcommands":
                lines += command_lines(words, entry, helps)
            else:
                lines += entry_lines(entry, title == "Positionals")
    pages = see_also(tuple(words), helps)
    if pages:
        lines += [".SH SEE ALSO", ", ".join(f"\\fB{literal(page)}\\fR(1)" for page in pages)]
    return "\n".join(lines) + "\n"
