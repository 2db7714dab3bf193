# skilldrop — every entry point a developer, CI or `sam build` uses.
#
#   make run     serve examples/bucket on http://127.0.0.1:8080 (no AWS account, no Docker)
#   make test    unit tests, short fuzz runs, and the emulator tier (starts moto_server when needed)
#   make lint    gofmt, go vet, golangci-lint, go mod tidy
#   make bench   the benchmarks behind the figures in the issues

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO            ?= go
BIN           := $(CURDIR)/.bin
GOLANGCI_VERSION := v2.15.0
GOLANGCI      := $(BIN)/golangci-lint-$(GOLANGCI_VERSION)

# The emulator every integration test talks to. LocalStack listens on the same
# port; whatever already listens there is used as is.
export AWS_ENDPOINT_URL ?= http://127.0.0.1:4566
export AWS_REGION ?= us-east-1
export AWS_ACCESS_KEY_ID ?= test
export AWS_SECRET_ACCESS_KEY ?= test
# The SDK must not look for profiles or IMDS when it talks to the emulator.
export AWS_EC2_METADATA_DISABLED := true

FUZZTIME ?= 10s
BENCHTIME ?= 1s
# Fuzz targets run briefly by `make test` (package:target).
FUZZ_TARGETS := pkg/digest:FuzzParse pkg/skillmd:FuzzParseSkill

.PHONY: help
help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: build
build: ## build the packages
	$(GO) build ./...

.PHONY: test
test: test-unit fuzz test-integration ## every test tier

.PHONY: test-unit
test-unit: ## fast tier: no services
	$(GO) test -count=1 ./...

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*} ; \
	done

.PHONY: test-integration
test-integration: ## emulator tier: starts moto_server on 127.0.0.1:4566 unless something listens there
	scripts/emulator.sh run $(GO) test -count=1 -tags integration ./...

.PHONY: bench
bench: ## benchmarks (BENCHTIME=1s)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

.PHONY: lint
lint: $(GOLANGCI) ## gofmt, go vet, golangci-lint, go mod tidy
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GOLANGCI) run ./...
	$(GO) mod tidy -diff

$(GOLANGCI):
	mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv $(BIN)/golangci-lint $@

.PHONY: emulator-up emulator-down
emulator-up: ## start moto_server on 127.0.0.1:4566 (kept running)
	scripts/emulator.sh up
emulator-down: ## stop the moto_server emulator-up started
	scripts/emulator.sh down

.PHONY: clean
clean: ## remove build outputs
	rm -rf build bin .run
