# syntax=docker/dockerfile:1
# ContractFlow image: a cgo binary (SQLite) built on Debian, run on Debian
# slim as an unprivileged user, health-checked by `contractflow health`.
#
# Base images are exact tags, given as build arguments so they can be pinned
# by digest where a registry is reachable:
#   docker buildx imagetools inspect golang:1.26-bookworm   # prints the digest
#   docker build --build-arg GO_IMAGE=golang:1.26-bookworm@sha256:<digest> \
#                --build-arg RUNTIME_IMAGE=debian:bookworm-slim@sha256:<digest> .
# (No digest is written here: they were not resolvable where this file was
# written, and an invented digest would fail every build.)
ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=""
ARG BUILD_TIME=""
RUN BI=github.com/contractflow/contractflow/platform/buildinfo \
    && CGO_ENABLED=1 go build -tags sqlite_fts5 -trimpath \
      -ldflags "-s -w -X ${BI}.Version=${VERSION} -X ${BI}.Revision=${COMMIT} -X ${BI}.BuildTime=${BUILD_TIME}" \
      -o /out/contractflow ./cmd/contractflow

FROM ${RUNTIME_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 contractflow \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin contractflow \
    && mkdir -p /app/config /data && chown 10001:10001 /data
WORKDIR /app
COPY --from=build /out/contractflow /usr/local/bin/contractflow
USER 10001:10001
ENV CONTRACTFLOW_DATABASE_DSN=/data/contractflow.db \
    CONTRACTFLOW_STORAGE_PATH=/data/files \
    CONTRACTFLOW_LOG_DIR=/data/logs
VOLUME ["/data"]
EXPOSE 8080
# No curl in the image: the binary probes its own /health/ready.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["contractflow", "health"]
ENTRYPOINT ["contractflow"]
CMD ["serve"]
