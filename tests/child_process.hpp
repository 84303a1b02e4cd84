// A child process for multi-process tests: spawned with its stdout on a pipe, read line by line
// with a deadline, and killed with SIGKILL and reaped when the test is done with it (or gives
// up), so no test can hang on a child.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace pipelens::testing {

class ChildProcess {
  public:
    using Clock = std::chrono::steady_clock;

    // arguments[0] is the program.
    explicit ChildProcess(std::vector<std::string> arguments) {
        int pipe_ends[2];
        if (pipe2(pipe_ends, O_CLOEXEC) != 0)
            return;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
        std::vector<char*> argv;
        for (std::string& argument : arguments)
            argv.push_back(argument.data());
        argv.push_back(nullptr);
        if (posix_spawn(&pid_, arguments[0].c_str(), &actions, nullptr, argv.data(), environ) != 0)
            pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
        close(pipe_ends[1]);
        output_ = pipe_ends[0];
    }
    ~ChildProcess() {
        kill_and_wait();
        if (output_ >= 0)
            close(output_);
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    bool started() const { return pid_ > 0 && output_ >= 0; }
    pid_t pid() const { return pid_; }
    void send(int signal) const {
        if (pid_ > 0)
            kill(pid_, signal);
    }

    // The next line the child prints; nullopt when it closed stdout or the deadline passed.
    std::optional<std::string> next_line(Clock::time_point deadline) {
        for (;;) {
            const std::size_t end = buffer_.find('\n');
            if (end != std::string::npos) {
                std::string line = buffer_.substr(0, end);
                buffer_.erase(0, end + 1);
                return line;
            }
            if (!read_some(deadline))
                return std::nullopt;
        }
    }

    // Every line until stdout closes or the deadline, including an unfinished last line.
    std::vector<std::string> all_lines(Clock::time_point deadline) {
        std::vector<std::string> lines;
        while (auto line = next_line(deadline))
            lines.push_back(std::move(*line));
        if (!buffer_.empty())
            lines.push_back(std::exchange(buffer_, {}));
        return lines;
    }

    // The exit status, or -1 when the child had to be killed at the deadline (or died of a
    // signal).
    int wait(Clock::time_point deadline) {
        if (pid_ <= 0)
            return -1;
        int status = 0;
        while (waitpid(pid_, &status, WNOHANG) == 0) {
            if (Clock::now() > deadline) {
                kill_and_wait();
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    // SIGKILL, then reap (SIGKILL cannot be ignored, so this returns promptly). True when the
    // child was killed by that signal rather than having exited by itself.
    bool kill_and_wait() {
        if (pid_ <= 0)
            return false;
        kill(pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    }

  private:
    // Appends what is readable now; false at end of file or at the deadline.
    bool read_some(Clock::time_point deadline) {
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0)
                return false;
            pollfd ready{output_, POLLIN, 0};
            const int polled = poll(&ready, 1, static_cast<int>(left.count()));
            if (polled < 0 && errno == EINTR)
                continue;
            if (polled <= 0)
                return false;
            char chunk[4096];
            const ssize_t count = read(output_, chunk, sizeof chunk);
            if (count < 0 && errno == EINTR)
                continue;
            if (count <= 0)
                return false;
            buffer_.append(chunk, static_cast<std::size_t>(count));
            return true;
        }
    }

    pid_t pid_ = -1;
    int output_ = -1;
    std::string buffer_;
};

}  // namespace pipelens::testing
