# httpz — the quick start is `make serve` and `make test`; both install what is
# missing first (scripts/deps.sh is idempotent).
PORT ?= 8080
DIR ?= examples/site
DUNE ?= dune

.PHONY: all deps deps-build deps-bench build test bench bench-quick bench-h2-floor serve fuzz soak autobahn clean

all: build

deps-build:
	@scripts/deps.sh build
deps:
	@scripts/deps.sh test
deps-bench:
	@scripts/deps.sh bench

# What `make serve` builds: the libraries, the httpz binary and the
# examples, and nothing that needs a test-only package (test/project/build/
# build_test.sh builds exactly this with those packages out of reach).
# Every target builds in the release profile (dune-workspace), so `make
# test` and `make bench` test and measure the binary `make serve` runs and
# `dune install` installs (test/project/build/profile_test.sh checks it).
BUILD_TARGETS = @install @examples/all

build: deps-build
	$(DUNE) build $(BUILD_TARGETS)

test: deps
	$(DUNE) build @install @default
	scripts/test.sh

bench: deps-bench
	$(DUNE) build @install @default
	bench/run.sh full

bench-quick: deps-bench
	$(DUNE) build @install @default
	bench/run.sh quick

# Where HTTP/2 server CPU goes per request (kernel, OpenSSL, the rest) for
# httpz and h2o in bench_h2.py's cases, and the least ratio to h2o that the
# kernel's and OpenSSL's part leaves httpz (bench/server/h2_floor.py; perf
# needs the right to sample another process: root here). About 4 minutes.
bench-h2-floor: deps-bench
	$(DUNE) build @install @default
	bench/server/h2_floor.py

# Differential fuzzing of the request parser against Node's http_parser and
# Python's h11 (test/lib/http/fuzz/DIFFERENCES.md). A fresh random seed each run,
# printed first (FUZZ_SEED=N to replay one); FUZZ_COUNT=N bounds the number
# of inputs instead of the time.
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= -1
fuzz: deps
	$(DUNE) build ./test/lib/http/fuzz/fuzz.exe
	./_build/default/test/lib/http/fuzz/fuzz.exe --seed $(FUZZ_SEED) $(if $(FUZZ_COUNT),--count $(FUZZ_COUNT),--seconds $(FUZZ_SECONDS))

# Soak test (bench/README.md, "Soak"): one `httpz serve --workers 1` under wrk
# keep-alive + Connection: close traffic, ~200 slowloris connections and a
# stream of malformed requests at once, for SOAK_SECONDS on each backend
# (io_uring, then epoll); RSS, fds and heap are
# sampled every 10 s. Non-zero exit on any error or growth.
SOAK_SECONDS ?= 300
soak: deps-bench
	$(DUNE) build @install @default
	bench/soak/soak.py --seconds $(SOAK_SECONDS) --io uring
	bench/soak/soak.py --seconds $(SOAK_SECONDS) --io epoll

# WebSocket conformance: Autobahn|Testsuite sections 1-13 in full against
# examples/ws_echo.exe, over ws:// and wss:// on io_uring and epoll
# (scripts/autobahn.sh); `make test` runs a fixed subset of it.
autobahn: deps
	scripts/autobahn.sh

serve: build
	./_build/install/default/bin/httpz serve -d $(DIR) -p $(PORT)

clean:
	$(DUNE) clean
