# httpz — the quick start is `make serve` and `make test`; both install what is
# missing first (scripts/deps.sh is idempotent).
PORT ?= 8080
DIR ?= examples/site
DUNE ?= dune

.PHONY: all deps deps-build deps-bench build test bench bench-quick serve fuzz soak clean

all: build

deps-build:
	@scripts/deps.sh build
deps:
	@scripts/deps.sh test
deps-bench:
	@scripts/deps.sh bench

build: deps-build
	$(DUNE) build @install @default

test: deps
	$(DUNE) build @install @default
	scripts/test.sh

bench: deps-bench
	$(DUNE) build --profile release @install @default
	bench/run.sh full

bench-quick: deps-bench
	$(DUNE) build --profile release @install @default
	bench/run.sh quick

serve: build
	./_build/install/default/bin/httpz serve -d $(DIR) -p $(PORT)

clean:
	$(DUNE) clean
