#!/usr/bin/env python3
"""The command line of `pipelens` and `pipelens-view` as the built programs print it (--help),
read into one model that the man pages (man_page.py) and shell completions (completion.py) are
written from, so neither can drift from what the commands accept.

Invariants: nothing here knows a command, option or schedule kind by name; all of it comes from
the help text (CLI11's layout: a description line, "Usage:", then titled sections of
"  NAMES TYPE   description" entries, long ones continued on indented lines). The output is
deterministic (no dates), so a rebuild writes the same bytes.

Usage: scripts/packaging/cli_help.py PIPELENS PIPELENS_VIEW OUT_DIR
  writes OUT_DIR/man/*.1.gz, OUT_DIR/completion/pipelens (bash), OUT_DIR/completion/_pipelens (zsh).
  PIPELENS_VIEW may be "-" (no viewer built); `run` and `explain` are left out when `pipelens`
  cannot start the runtime.
"""
import dataclasses
import gzip
import os
import pathlib
import re
import subprocess
import sys

ENTRY = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")
CONTINUATION = re.compile(r"^\s{4,}(\S.*)$")
# Where a schedule option's description lists the kinds: "Schedule kind: A, B (...)".
KINDS = re.compile(r"^Schedule(?: kind)?: ([^()]+?)(?: \(|$)")
CHOICES = re.compile(r":\{([^}]*)\}")


@dataclasses.dataclass
class Entry:
    """One line of a help section: an option, a positional or a subcommand."""
    names: list  # "--out", "-h" ... for options; the positional's or command's name otherwise
    type: str  # "TEXT", "INT REQUIRED", "TEXT:{table,csv,json}", "" for a flag or a command
    description: str

    @property
    def takes_value(self):
        return self.type != ""

    @property
    def choices(self):
        """The values CLI11 lists for the option ("TEXT:{a,b}"), else the schedule kinds its
        description names, else []."""
        listed = CHOICES.search(self.type)
        if listed:
            return listed.group(1).split(",")
        kinds = KINDS.match(self.description)
        return [kind.strip() for kind in kinds.group(1).split(",")] if kinds else []


@dataclasses.dataclass
class Help:
    description: str
    usage: str  # what follows the program and command names: "[OPTIONS] [experiment]"
    sections: list  # (title, [Entry]) in the order printed

    def section(self, title):
        return next((entries for name, entries in self.sections if name == title), [])

    @property
    def options(self):
        return [entry for title, entries in self.sections
                if title not in ("Positionals", "Subcommands") for entry in entries]

    @property
    def positionals(self):
        return self.section("Positionals")

    @property
    def subcommands(self):
        return self.section("Subcommands")


def parse_entry(line):
    match = ENTRY.match(line)
    left, description = match.group(1), match.group(2) or ""
    head, _, kind = left.partition(" ")
    return Entry(names=head.split(","), type=kind.strip(), description=description)


def parse_help(text, words):
    """The Help in `text`, printed by the command `words` (["pipelens", "simulate"])."""
    lines = text.splitlines()
    description = lines[0].strip() if lines else ""
    usage, sections, entries = "", [], None
    for line in lines[1:]:
        if line.startswith("Usage: "):
            rest = line[len("Usage: "):].split()
            # The program as invoked (a path) and the command words come first.
            usage = " ".join(rest[len(words):])
        elif line and not line[0].isspace() and line.endswith(":"):
            entries = []
            sections.append((line[:-1], entries))
        elif entries and CONTINUATION.match(line):  # a description on its own line(s)
            last = entries[-1]
            last.description = f"{last.description} {line.strip()}".strip()
        elif entries is not None and ENTRY.match(line):
            entries.append(parse_entry(line))
    return Help(description=description, usage=usage, sections=sections)


def help_text(program, words):
    """What `words... --help` prints, run as `program` with argv[0] the bare name."""
    result = subprocess.run([words[0], *words[1:], "--help"], executable=program,
                            capture_output=True, text=True, check=False,
                            env={**os.environ, "COLUMNS": "100"})
    return result.stdout if result.returncode == 0 else None


def version_text(program):
    return subprocess.run([program, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def collect(pipelens, viewer):
    """{("pipelens",): Help, ("pipelens", "simulate"): Help, ..., ("pipelens-view",): Help}."""
    helps = {("pipelens",): parse_help(help_text(pipelens, ["pipelens"]), ["pipelens"])}
    for command in helps[("pipelens",)].subcommands:
        words = ["pipelens", command.names[0]]
        text = help_text(pipelens, words)
        if text is not None:  # `run`/`explain` without the runtime built
            helps[tuple(words)] = parse_help(text, words)
    if viewer:
        helps[("pipelens-view",)] = parse_help(help_text(viewer, ["pipelens-view"]),
                                               ["pipelens-view"])
    return helps


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import completion
    import man_page

    pipelens, viewer, out = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    helps = collect(pipelens, None if viewer == "-" else viewer)
    version = version_text(pipelens)
    (out / "man").mkdir(parents=True, exist_ok=True)
    for words, command_help in helps.items():
        page = man_page.man_page(words, command_help, helps, version)
        # Compressed as Debian wants man pages: gzip -9, no name or time stored.
        (out / "man" / f"{'-'.join(words)}.1.gz").write_bytes(
            gzip.compress(page.encode(), 9, mtime=0))
    (out / "completion").mkdir(parents=True, exist_ok=True)
    (out / "completion" / "pipelens").write_text(completion.bash(helps))
    (out / "completion" / "_pipelens").write_text(completion.zsh(helps))


if __name__ == "__main__":
    main()
