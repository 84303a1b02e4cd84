// `pipelens-runtime`: the commands that execute models on LibTorch (`run`, `explain`), in their
// own executable so that the rest of `pipelens` never loads LibTorch. Users type `pipelens run
// ...`; `pipelens` execs this binary with that same command line (argv[0] included), so help
// and messages read as before.
#include "app/cli/commands.hpp"

int main(int argc, char** argv) {
    using namespace pipelens;
    CLI::App app{"pipelens-runtime: the LibTorch commands of pipelens (run, explain)"};
    app.require_subcommand(1);
    app.set_version_flag("--version", cli::kVersion);
    cli::add_run_command(app, std::vector<std::string>(argv + 1, argv + argc));
    cli::add_explain_command(app);
    return cli::parse_and_run(app, argc, argv);
}
