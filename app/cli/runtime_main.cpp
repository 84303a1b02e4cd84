// `pipelens-runtime`: the commands that execute models on LibTorch (`run`, `explain`), in their
// own executable so that the rest of `pipelens` never loads LibTorch. Users type `pipelens run
// ...`; `pipelens` execs this binary with that same command line (argv[0] included), so help
// and messages read as before.
#include <cstdio>
#include <cstdlib>

#include "app/cli/commands.hpp"

// Ends without static destructors: a connect given up (engine/runtime/rendezvous_store.hpp) can
// leave a thread blocked in c10d or gloo, and library teardown under it could crash the process
// after its error was said. Everything the command writes is closed before it returns.
int main(int argc, char** argv) {
    using namespace pipelens;
    CLI::App app{"pipelens-runtime: the LibTorch commands of pipelens (run, explain)"};
    app.require_subcommand(1);
    app.set_version_flag("--version", cli::kVersion);
    cli::add_run_command(app, std::vector<std::string>(argv + 1, argv + argc));
    cli::add_explain_command(app);
    const int code = cli::parse_and_run(app, argc, argv);
    std::fflush(nullptr);
    std::_Exit(code);
}
