# kcbench — see README.md.
GO      ?= go
BIN     := bin/kcbench
# Integration tests start real Keycloak and PostgreSQL processes; one stack
# per package, so run packages one at a time on small machines.
ITEST_FLAGS ?= -tags integration -p 1 -count=1 -timeout 40m
# The browser tests save their screenshots here (kept after the run).
export KCBENCH_ARTIFACTS ?= $(CURDIR)/test-artifacts

.PHONY: build install run test test-long test-matrix unit-test integration-test vet bench bench-seed bench-loadgen fuzz clean

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/kcbench

# kcbench into $(go env GOPATH)/bin (or $GOBIN).
install:
	$(GO) install -buildvcs=auto ./cmd/kcbench

# The main job: build, start a local Keycloak + PostgreSQL, measure, report, stop.
run: build
	$(BIN) quickstart

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./...

unit-test:
	$(GO) test -race -count=1 ./...

# Only the packages with integration tests: the others' unit tests ran above.
ITEST_PKGS ?= $(sort $(dir $(shell grep -rl --include='*_test.go' '^//go:build integration' cmd internal)))
integration-test:
	$(GO) test $(ITEST_FLAGS) $(addprefix ./,$(ITEST_PKGS))

test: vet unit-test integration-test

# make test and the second-opinion tests it skips for time (stacktest.Long:
# a cluster's restarts, a snapshot restored into another stack, the newest
# line's clone in a schema of its own, the experiment watchdog's snapshot
# restore, node-db latency on a stack of its own): about 14 minutes more.
test-long: vet unit-test
	KCBENCH_TEST_LONG=1 $(GO) test $(subst 40m,60m,$(ITEST_FLAGS)) ./...

# The clone strategy checked against the fast one on every supported
# Keycloak line, each with Keycloak's tables in the default schema and in a
# schema of their own (--db-schema): a stack per line and schema. `make
# test` takes only the oldest and newest line. About 170 MiB and a build per
# version on first use.
KCBENCH_TEST_KC_VERSIONS ?= 26.0.0,26.2.5,26.5.6,26.7.3
test-matrix:
	KCBENCH_TEST_KC_VERSIONS=$(KCBENCH_TEST_KC_VERSIONS) KCBENCH_TEST_DB_SCHEMAS=default,kcbench \
		$(GO) test -tags integration -p 1 -count=1 -timeout 90m -run 'TestCloneLikeFast' -v ./internal/dataset/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Seed time, clone vs fast vs rest, both modes; growth; snapshot restore. Several minutes.
bench-seed: build
	scripts/bench-seed.sh $(BENCH_SEED_ARGS)

# kcbench's load engine vs wrk and k6 (when installed) on the local stack's
# JWKS endpoint: CPU-µs per request and ratios. Needs `bin/kcbench up`.
bench-loadgen:
	$(GO) build -buildvcs=auto -tags fasthttp -o bin/kcbench-loadgen ./cmd/kcbench
	bin/kcbench-loadgen loadgen-bench $(LOADGEN_FLAGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseStat -fuzztime 20s ./internal/stack/
	$(GO) test -run '^$$' -fuzz FuzzParseFlags -fuzztime 20s ./internal/cliutil/
	$(GO) test -run '^$$' -fuzz FuzzParseFault -fuzztime 20s ./internal/stack/
	$(GO) test -run '^$$' -fuzz FuzzParseLatency -fuzztime 20s ./internal/stack/
	$(GO) test -run '^$$' -fuzz FuzzParseSegment -fuzztime 20s ./internal/load/
	$(GO) test -run '^$$' -fuzz FuzzParsePolicy -fuzztime 20s ./internal/dataset/
	$(GO) test -run '^$$' -fuzz FuzzParseRealm -fuzztime 20s ./internal/dataset/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 20s ./internal/experiment/
	$(GO) test -run '^$$' -fuzz FuzzParseThreshold -fuzztime 20s ./internal/results/
	$(GO) test -run '^$$' -fuzz FuzzParseSLOs -fuzztime 20s ./internal/capacity/
	$(GO) test -run '^$$' -fuzz FuzzParseMix -fuzztime 20s ./internal/scenario/
	$(GO) test -run '^$$' -fuzz FuzzStages -fuzztime 20s ./internal/scenario/
	$(GO) test -run '^$$' -fuzz FuzzConfigYAML -fuzztime 20s ./internal/scenario/
	$(GO) test -run '^$$' -fuzz FuzzParseBytes -fuzztime 20s ./internal/experiment/

clean:
	rm -rf bin
