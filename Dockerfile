# Build: the SQLite driver uses cgo, so build with gcc and run on glibc.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -tags sqlite_fts5 -trimpath \
      -ldflags "-s -w -X github.com/contractflow/contractflow/platform/buildinfo.Version=${VERSION}" \
      -o /out/contractflow ./cmd/contractflow

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /app contractflow \
    && mkdir -p /app/config /data && chown contractflow /data
WORKDIR /app
COPY --from=build /out/contractflow /usr/local/bin/contractflow
USER contractflow
ENV CONTRACTFLOW_DATABASE_DSN=/data/contractflow.db \
    CONTRACTFLOW_STORAGE_PATH=/data/files \
    CONTRACTFLOW_LOG_DIR=/data/logs
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["contractflow"]
CMD ["serve"]
