# The two commands of the README: `make demo` and `make test`.
# Both install missing Debian packages first, then build with CMake.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
# Tests side by side: twice the cores, as most suites spend much of their time waiting
# (timers, leases, fsyncs, child processes): at one per core the plain run kept 43% of
# two cores busy and took 3m10s, at two per core 1m48s.
TEST_JOBS  ?= $(shell echo $$(( $$(nproc) * 2 )))
CMAKE_ARGS ?=

.PHONY: all deps build test test-unit test-asan test-ui demo bench format clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DMUSTER_WERROR=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# Every test: the Check suites, the same suites under ASan+UBSan, and the browser tests.
test: test-unit test-asan test-ui

test-unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(TEST_JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DMUSTER_WERROR=ON -DMUSTER_SANITIZE=ON \
	  -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(TEST_JOBS)

test-ui: build
	@if [ -x tests/ui/run.sh ]; then tests/ui/run.sh $(BUILD); fi

demo: build
	scripts/demo.sh $(BUILD)

bench: build
	@echo "benchmarks are run by hand: see bench/README.md"

format:
	git ls-files '*.c' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# libFuzzer harnesses of the input decoders (clang only; run by hand, not by `make test`):
# builds them into build-fuzz/ and runs each for FUZZ_SECONDS. See fuzz/README.md.
FUZZ_SECONDS ?= 30
.PHONY: fuzz
fuzz:
	fuzz/run.sh $(FUZZ_SECONDS)
