# ContractFlow developer commands. `make run` starts the service on SQLite at
# :8080; `make test` runs every test (SQLite always, Postgres too when
# CONTRACTFLOW_TEST_POSTGRES_DSN is set).
BIN      := bin/contractflow
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILT    := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BI       := github.com/contractflow/contractflow/platform/buildinfo
LDFLAGS  := -s -w -X $(BI).Version=$(VERSION) -X $(BI).Revision=$(COMMIT) -X $(BI).BuildTime=$(BUILT)
PKGS     := ./...
# sqlite_fts5 compiles FTS5 into SQLite: master-data search uses trigram
# indexes with it (and scans without it).
TAGS     := sqlite_fts5

.PHONY: run build test screenshots test-short vet fmt fmt-check bench bench-scale bench-go clean

# A cold first build compiles SQLite (cgo) and every dependency: minutes on
# a small machine. Say so, and list packages as they compile (-v).
build:
	@if [ ! -x $(BIN) ]; then echo "make: first build of $(BIN): compiling SQLite (cgo) and the dependencies takes a few minutes on a cold cache; packages are listed as they compile"; fi
	@echo "make: go build -tags '$(TAGS)' -o $(BIN) ./cmd/contractflow"
	@CGO_ENABLED=1 go build -v -tags '$(TAGS)' -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/contractflow

run: build
	@echo "make: starting ./$(BIN) serve (Ctrl-C stops it)"
	./$(BIN) serve

# -race keeps concurrency bugs out; -p runs packages in parallel.
test:
	CGO_ENABLED=1 go test -tags '$(TAGS)' -race -count=1 -p 4 -timeout 30m $(PKGS)

# The README's pictures, taken by the browser tests (needs chromium).
screenshots:
	CGO_ENABLED=1 CONTRACTFLOW_SCREENSHOTS=$(CURDIR)/docs/screenshots go test -tags '$(TAGS)' -count=1 -run TestBrowser ./modules/all/

test-short:
	go test -tags '$(TAGS)' -count=1 $(PKGS)

vet:
	go vet -tags '$(TAGS)' $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The end-to-end benchmark (issues 8 and 12): builds and starts the server
# on a fresh database, loads 100 000 contracts, drives every scenario,
# measures the raw limits and updates docs/benchmarks.md. Flags pass
# through, e.g.
#   make bench BENCHFLAGS="--postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'"
#   make bench BENCHFLAGS="--contracts 5000 --duration 3s --doc ''"
# make bench-scale runs the scale series (a fresh SQLite data set of each
# size, CPU per request of the reads and the transition, and the 1/8/32
# client sweep at 100 000) and updates the doc's scale section.
BENCHFLAGS ?=
SCALE      ?= 10000,100000,300000
bench:
	CGO_ENABLED=1 GOFLAGS="$$GOFLAGS -tags=$(TAGS)" go run ./cmd/cfbench $(BENCHFLAGS)

bench-scale:
	CGO_ENABLED=1 GOFLAGS="$$GOFLAGS -tags=$(TAGS)" go run ./cmd/cfbench --scale $(SCALE) --timeout 60m $(BENCHFLAGS)

# The Go micro-benchmarks, each in its package.
bench-go:
	go test -tags '$(TAGS)' -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin data
