# ContractFlow developer commands. `make run` starts the service on SQLite at
# :8080; `make test` runs every test (SQLite always, Postgres too when
# CONTRACTFLOW_TEST_POSTGRES_DSN is set).
BIN      := bin/contractflow
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/contractflow/contractflow/platform/buildinfo.Version=$(VERSION)
PKGS     := ./...

.PHONY: run build test test-short vet fmt fmt-check bench clean

build:
	CGO_ENABLED=1 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/contractflow

run: build
	./$(BIN) serve

# -race keeps concurrency bugs out; -p runs packages in parallel.
test:
	CGO_ENABLED=1 go test -race -count=1 -p 4 -timeout 15m $(PKGS)

test-short:
	go test -count=1 $(PKGS)

vet:
	go vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	go test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin data
