# The two commands a newcomer needs: `make demo` and `make test`. Both install missing Debian
# packages (scripts/install-deps.sh), configure once, build, then run.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
FUZZ_SECONDS ?= 300

.PHONY: all deps configure build demo test bench fuzz package format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/tests/pipelens_bench_schedule
	@$(BUILD)/tests/pipelens_bench_zero_bubble
	@$(BUILD)/tests/pipelens_bench_simulator
	@$(BUILD)/tests/pipelens_bench_sweep
	@$(BUILD)/tests/pipelens_bench_critical_path
	@$(BUILD)/tests/pipelens_bench_partition
	@$(BUILD)/tests/pipelens_bench_resimulate
	@$(BUILD)/tests/pipelens_bench_trace_writer
	@if [ -x $(BUILD)/tests/pipelens_bench_runtime ]; then $(BUILD)/tests/pipelens_bench_runtime; fi
	@scripts/bench_cli_startup.sh $(BUILD)/app/cli/pipelens
	@scripts/bench_trace_write.sh $(BUILD) 5

# Each libFuzzer target for FUZZ_SECONDS, one at a time; new inputs and findings stay in $(BUILD).
fuzz: build
	@scripts/fuzz.sh $(BUILD) $(FUZZ_SECONDS)

# The Debian packages pipelens and pipelens-runtime, in $(BUILD) (docs/install.md).
package: build
	@cmake --build $(BUILD) --target package

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD)
