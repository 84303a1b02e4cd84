// Rank processes. posix_spawn of /proc/self/exe keeps the exact binary; the environment is
// ours plus torchrun's variables, so a rank started here and one started by hand (or by
// torchrun) read the same configuration.
//
// Invariant: no rank outlives its launcher. While ranks run, the launcher holds SIGINT, SIGTERM
// and SIGHUP blocked and takes them with sigtimedwait (no handler, no global state), passing
// one on to the ranks; the ranks start with those signals at their defaults, and each asks the
// kernel to end it when its launcher dies (PR_SET_PDEATHSIG), which covers a SIGKILL too.
#include "app/cli/rank_launcher.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "app/cli/stop_signal_watch.hpp"

extern char** environ;

namespace pipelens::cli {
namespace {

// Set in each rank's environment: its launcher's process id.
constexpr const char* kLauncherVariable = "PIPELENS_LAUNCHER_PID";
// How long ranks asked to stop (a signal passed on) get before they are killed.
constexpr std::chrono::seconds kStopGrace{5};

std::vector<std::string> rank_environment(int rank, int process_count,
                                          const std::string& master_address, int master_port) {
    const auto is_ours = [](const std::string& text) {
        for (const char* name : {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=",
                                 "MASTER_ADDR=", "MASTER_PORT="})
            if (text.rfind(name, 0) == 0)
                return true;
        return false;
    };
    std::vector<std::string> variables;
    for (char** entry = environ; *entry != nullptr; ++entry)
        if (!is_ours(*entry))
            variables.push_back(*entry);
    variables.push_back(fmt::format("RANK={}", rank));
    variables.push_back(fmt::format("WORLD_SIZE={}", process_count));
    variables.push_back(fmt::format("LOCAL_RANK={}", rank));
    variables.push_back(fmt::format("LOCAL_WORLD_SIZE={}", process_count));
    variables.push_back(fmt::format("MASTER_ADDR={}", master_address));
    variables.push_back(fmt::format("MASTER_PORT={}", master_port));
    variables.push_back(fmt::format("{}={}", kLauncherVariable, getpid()));
    return variables;
}

// Blocks the stop signals in the launcher for as long as it lives, and gives the ranks the mask
// and dispositions it had before.
class HeldStopSignals {
  public:
    HeldStopSignals() {
        const sigset_t signals = stop_signals();
        pthread_sigmask(SIG_BLOCK, &signals, &previous_);
        posix_spawnattr_init(&attributes_);
        posix_spawnattr_setsigmask(&attributes_, &previous_);
        posix_spawnattr_setsigdefault(&attributes_, &signals);
        posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    ~HeldStopSignals() {
        posix_spawnattr_destroy(&attributes_);
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    HeldStopSignals(const HeldStopSignals&) = delete;
    HeldStopSignals& operator=(const HeldStopSignals&) = delete;
    const posix_spawnattr_t* for_ranks() const { return &attributes_; }

    // Waits up to `wait` for a stop signal; 0 when none came.
    static int take(std::chrono::milliseconds wait) {
        const sigset_t signals = stop_signals();
        timespec timeout{0, static_cast<long>(wait.count()) * 1'000'000L};
        const int signal = sigtimedwait(&signals, nullptr, &timeout);
        return signal > 0 ? signal : 0;
    }

  private:
    sigset_t previous_{};
    posix_spawnattr_t attributes_{};
};

std::vector<char*> pointers(std::vector<std::string>& texts) {
    std::vector<char*> result;
    for (std::string& text : texts)
        result.push_back(text.data());
    result.push_back(nullptr);
    return result;
}

std::string killed_by(int status) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
}

std::string describe(int rank, int status) {
    if (WIFSIGNALED(status))
        return fmt::format("rank {} was {}", rank, killed_by(status));
    return fmt::format("rank {} exited with code {}", rank, WEXITSTATUS(status));
}

}  // namespace

LaunchResult launch_ranks(const std::vector<std::string>& arguments, int process_count,
                          const std::string& master_address, int master_port,
                          std::chrono::milliseconds grace, const OnRankEnd& ended) {
    const HeldStopSignals held;
    std::vector<pid_t> children;
    for (int rank = 0; rank < process_count; ++rank) {
        std::vector<std::string> argv{"pipelens"};
        argv.insert(argv.end(), arguments.begin(), arguments.end());
        std::vector<std::string> environment =
            rank_environment(rank, process_count, master_address, master_port);
        std::vector<char*> argv_pointers = pointers(argv);
        std::vector<char*> environment_pointers = pointers(environment);
        pid_t child = 0;
        const int error = posix_spawn(&child, "/proc/self/exe", nullptr, held.for_ranks(),
                                      argv_pointers.data(), environment_pointers.data());
        if (error != 0) {
            for (pid_t started : children)
                kill(started, SIGKILL);
            throw std::runtime_error(
                fmt::format("cannot start rank {}: {}", rank, std::strerror(error)));
        }
        children.push_back(child);
    }

    LaunchResult result;
    result.deaths.resize(process_count);
    std::vector<bool> done(process_count, false);
    int remaining = process_count;
    auto deadline = std::chrono::steady_clock::time_point::max();
    while (remaining > 0) {
        for (int rank = 0; rank < process_count; ++rank) {
            if (done[rank])
                continue;
            int status = 0;
            if (waitpid(children[rank], &status, WNOHANG) != children[rank])
                continue;
            done[rank] = true;
            --remaining;
            const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (ok || result.interrupted_by != 0)  // stopped on request: not a death
                continue;
            result.problems.push_back(describe(rank, status));
            if (WIFSIGNALED(status))
                result.deaths[rank] = killed_by(status);
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
            if (ended)
                ended(rank, WIFSIGNALED(status) ? killed_by(status)
                                                : fmt::format("exited with code {}", code));
            result.exit_code = std::max(result.exit_code, code == 0 ? 1 : code);
            deadline = std::min(deadline, std::chrono::steady_clock::now() + grace);
        }
        if (remaining > 0 && std::chrono::steady_clock::now() > deadline) {
            for (int rank = 0; rank < process_count; ++rank)
                if (!done[rank]) {
                    kill(children[rank], SIGKILL);
                    waitpid(children[rank], nullptr, 0);
                    done[rank] = true;
                    result.problems.push_back(
                        result.interrupted_by != 0
                            ? fmt::format("rank {} did not stop within {} s of being asked; killed",
                                          rank, kStopGrace.count())
                            : fmt::format("rank {} did not stop within {} ms of another rank "
                                          "failing; killed",
                                          rank, grace.count()));
                }
            break;
        }
        if (const int signal = HeldStopSignals::take(std::chrono::milliseconds(10));
            signal != 0 && result.interrupted_by == 0) {
            result.interrupted_by = signal;
            result.exit_code = 128 + signal;
            for (int rank = 0; rank < process_count; ++rank)
                if (!done[rank])
                    kill(children[rank], signal);
            deadline = std::min(deadline, std::chrono::steady_clock::now() + kStopGrace);
        }
    }
    return result;
}

void end_with_launcher() {
    const char* launcher = std::getenv(kLauncherVariable);
    if (launcher == nullptr)
        return;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != static_cast<pid_t>(std::atoll(launcher)))
        std::_Exit(128 + SIGTERM);  // the launcher died before the request took hold
}

}  // namespace pipelens::cli
