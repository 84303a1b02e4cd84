"""Tests of the generators in scripts/packaging/: the help parser (cli_help), the man pages (man_page),
the shell completions (completion) and the icon (make_icons), on fixed inputs with exact
expected outputs. Run by ctest as install.generators: python3 tests/install/test_generators.py
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PACKAGING = ROOT / "scripts" / "packaging"
sys.path.insert(0, str(PACKAGING))

import cli_help  # noqa: E402
import completion  # noqa: E402
import make_icons  # noqa: E402
import man_page  # noqa: E402

MAIN_HELP = """\
pipelens: simulate pipeline schedules
Usage: build/app/cli/pipelens [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit
  --version                   Display program version information and exit

Subcommands:
  schedule                    Generate a schedule
  summary                     List a trace's runs
"""

SCHEDULE_HELP = """\
Generate a schedule
Usage: pipelens schedule [OPTIONS] [file]

Positionals:
  file TEXT                   Schedule CSV, one row per rank

Options:
  -h,--help                   Print this help message and exit
  --kind TEXT REQUIRED        Schedule: GPipe, 1F1B, ZBVZeroBubble (case-insensitive)
  --pp INT                    Pipeline ranks
  --format TEXT:{table,csv,json}
                              Output format
  --split TEXT ...            Split point; repeatable
  --comms                     Lower: add the SEND/RECV actions


Model (flags or [model]):
  --layers INT                Model layers
"""

SUMMARY_HELP = """\
List a trace's runs
Usage: pipelens summary [OPTIONS] trace

Positionals:
  trace TEXT REQUIRED         Trace file

Options:
  -h,--help                   Print this help message and exit
  --run INT                   Run to show
"""


def helps():
    return {
        ("pipelens",): cli_help.parse_help(MAIN_HELP, ["pipelens"]),
        ("pipelens", "schedule"): cli_help.parse_help(SCHEDULE_HELP, ["pipelens", "schedule"]),
        ("pipelens", "summary"): cli_help.parse_help(SUMMARY_HELP, ["pipelens", "summary"]),
    }


class ParseHelp(unittest.TestCase):
    def test_sections_entries_and_wrapped_descriptions(self):
        schedule = helps()[("pipelens", "schedule")]
        self.assertEqual(schedule.description, "Generate a schedule")
        self.assertEqual(schedule.usage, "[OPTIONS] [file]")
        self.assertEqual([title for title, _ in schedule.sections],
                         ["Positionals", "Options", "Model (flags or [model])"])
        self.assertEqual(schedule.positionals,
                         [cli_help.Entry(["file"], "TEXT", "Schedule CSV, one row per rank")])
        self.assertEqual(
            [(entry.names, entry.type, entry.description) for entry in schedule.options],
            [(["-h", "--help"], "", "Print this help message and exit"),
             (["--kind"], "TEXT REQUIRED",
              "Schedule: GPipe, 1F1B, ZBVZeroBubble (case-insensitive)"),
             (["--pp"], "INT", "Pipeline ranks"),
             (["--format"], "TEXT:{table,csv,json}", "Output format"),
             (["--split"], "TEXT ...", "Split point; repeatable"),
             (["--comms"], "", "Lower: add the SEND/RECV actions"),
             (["--layers"], "INT", "Model layers")])

    def test_the_usage_drops_the_program_path_and_command_words(self):
        self.assertEqual(helps()[("pipelens",)].usage, "[OPTIONS] SUBCOMMAND")
        self.assertEqual([entry.names[0] for entry in helps()[("pipelens",)].subcommands],
                         ["schedule", "summary"])

    def test_choices_come_from_the_type_or_a_schedule_list(self):
        options = {entry.names[-1]: entry for entry in helps()[("pipelens", "schedule")].options}
        self.assertEqual(options["--format"].choices, ["table", "csv", "json"])
        self.assertEqual(options["--kind"].choices, ["GPipe", "1F1B", "ZBVZeroBubble"])
        self.assertEqual(options["--pp"].choices, [])
        self.assertEqual(cli_help.Entry(["--schedule"], "TEXT", "Schedule kind: A, B").choices,
                         ["A", "B"])


class ManPage(unittest.TestCase):
    def test_the_page_of_a_command(self):
        page = man_page.man_page(("pipelens", "summary"), helps()[("pipelens", "summary")],
                                 helps(), "pipelens 0.1.0")
        self.assertEqual(page, "\n".join([
            ".\\\" pipelens-summary(1), generated from `pipelens summary --help` when pipelens "
            "is built",
            '.TH PIPELENS\\-SUMMARY 1 "" "pipelens 0.1.0" "User Commands"',
            ".SH NAME",
            "pipelens\\-summary \\- List a trace's runs",
            ".SH SYNOPSIS",
            "\\fBpipelens summary\\fR [OPTIONS] trace",
            ".SH DESCRIPTION",
            "List a trace's runs",
            ".SH ARGUMENTS",
            ".TP",
            "\\fItrace\\fR (required)",
            "Trace file",
            ".SH OPTIONS",
            ".TP",
            "\\fB\\-h\\fR, \\fB\\-\\-help\\fR",
            "Print this help message and exit",
            ".TP",
            "\\fB\\-\\-run\\fR \\fIINT\\fR",
            "Run to show",
            ".SH SEE ALSO",
            "\\fBpipelens\\fR(1)",
        ]) + "\n")

    def test_the_main_page_names_each_command_page_and_groups_are_subsections(self):
        page = man_page.man_page(("pipelens",), helps()[("pipelens",)], helps(), "pipelens 0.1.0")
        self.assertIn("pipelens \\- simulate pipeline schedules\n", page)
        self.assertIn(".SH COMMANDS\n.TP\n\\fBschedule\\fR\nGenerate a schedule "
                      "(\\fBpipelens\\-schedule\\fR(1))\n", page)
        self.assertNotIn(".SH SEE ALSO", page)
        schedule = man_page.man_page(("pipelens", "schedule"), helps()[("pipelens", "schedule")],
                                     helps(), "pipelens 0.1.0")
        self.assertIn(".SS Model (flags or [model])\n", schedule)

    def test_a_positional_shows_repetition_and_requirement_not_its_type_text(self):
        entry = cli_help.Entry(["files"], "TEXT:FILE ... REQUIRED", "One file per rank")
        self.assertEqual(man_page.entry_lines(entry, positional=True),
                         [".TP", "\\fIfiles\\fR ... (required)", "One file per rank"])
        count = cli_help.Entry(["count"], "INT", "How many")
        self.assertEqual(man_page.entry_lines(count, positional=True),
                         [".TP", "\\fIcount\\fR INT", "How many"])

    def test_escaping(self):
        self.assertEqual(man_page.escape(".hidden \\n"), "\\&.hidden \\en")
        self.assertEqual(man_page.literal("--out"), "\\-\\-out")


class Completion(unittest.TestCase):
    def test_file_patterns_follow_what_a_positional_is(self):
        def entry(description):
            return cli_help.Entry(["x"], "TEXT", description)
        self.assertEqual(completion.file_pattern(entry("Trace file (SQLite)")), "*.db")
        self.assertEqual(completion.file_pattern(entry("Experiment TOML file")), "*.toml")
        self.assertEqual(completion.file_pattern(entry("Schedule CSV, one row per rank")), "*.csv")
        self.assertEqual(completion.file_pattern(entry("Results files and trace files")), "")
        self.assertEqual(completion.file_pattern(entry("Op call")), "")

    def bash_words(self, *words):
        """COMPREPLY of the generated bash completion for the command line `words`."""
        with tempfile.TemporaryDirectory() as folder:
            script = pathlib.Path(folder) / "pipelens"
            script.write_text(completion.bash(helps()))
            for name in ("run.db", "plan.toml", "order.csv"):
                (pathlib.Path(folder) / name).touch()
            result = subprocess.run(
                ["bash", "-c", 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));'
                 ' _pipelens; printf "%s\\n" "${COMPREPLY[@]}"', "_", str(script), *words],
                cwd=folder, capture_output=True, text=True, check=True)
            return [line for line in result.stdout.splitlines() if line]

    def test_bash_completes_commands_options_values_and_files(self):
        self.assertEqual(self.bash_words("pipelens", "s"), ["schedule", "summary"])
        self.assertEqual(self.bash_words("pipelens", "--v"), ["--version"])
        self.assertEqual(self.bash_words("pipelens", "schedule", "--f"), ["--format"])
        self.assertEqual(self.bash_words("pipelens", "schedule", "--kind", ""),
                         ["GPipe", "1F1B", "ZBVZeroBubble"])
        self.assertEqual(self.bash_words("pipelens", "schedule", "--format", "c"), ["csv"])
        self.assertEqual(self.bash_words("pipelens", "schedule", "--pp", ""), [])
        self.assertEqual(self.bash_words("pipelens", "summary", ""), ["run.db"])
        self.assertEqual(self.bash_words("pipelens", "schedule", ""), ["order.csv"])

    def test_zsh_specs(self):
        options = {entry.names[-1]: entry for entry in helps()[("pipelens", "schedule")].options}
        self.assertEqual(completion.zsh_option(options["--help"]),
                         "'(-h --help)'{-h,--help}'[Print this help message and exit]'")
        self.assertEqual(completion.zsh_option(options["--kind"]),
                         "'--kind[Schedule\\: GPipe, 1F1B, ZBVZeroBubble (case-insensitive)]"
                         ":value:(GPipe 1F1B ZBVZeroBubble)'")
        self.assertEqual(completion.zsh_option(options["--pp"]), "'--pp[Pipeline ranks]:number: '")
        self.assertEqual(completion.zsh_option(options["--split"]),
                         "'*--split[Split point; repeatable]:file:_files'")
        script = completion.zsh(helps())
        self.assertIn("        'summary:List a trace'\\''s runs'\n", script)
        self.assertIn("                summary) _arguments -s ", script)
        summary = helps()[("pipelens", "summary")]
        self.assertEqual(completion.zsh_positional(summary.positionals[0], 1),
                         "'1:trace:_files -g '\\''*.db'\\'''")


class Icons(unittest.TestCase):
    def test_the_committed_icons_are_what_the_script_draws(self):
        icons = ROOT / "assets" / "desktop" / "icons"
        for size in (16, 24, 32, 48):  # the larger sizes take seconds to draw in Python
            self.assertEqual((icons / f"{size}x{size}" / "apps" / "pipelens-view.png").read_bytes(),
                             make_icons.png(size, make_icons.render(size)), size)
        self.assertEqual((icons / "scalable" / "apps" / "pipelens-view.svg").read_text(),
                         make_icons.svg())

    def test_the_bars_make_the_pipeline_shape(self):
        bars = make_icons.bars()
        self.assertEqual(len(bars), 8)
        # rank 0 starts first and finishes last; rank 3's backward follows its forward at once
        self.assertAlmostEqual(bars[0][0], 0.172)
        self.assertAlmostEqual(bars[7][0] - bars[6][2], 2 * make_icons.GAP)


if __name__ == "__main__":
    unittest.main()
