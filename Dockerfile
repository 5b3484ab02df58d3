# agent-adaptor: the HTTP/SSE/AG-UI service in a slim image.
#
#   docker build -t agent-adaptor .
#   docker run -p 8080:8080 -e AGENT_ADAPTOR_API_KEY="$(openssl rand -hex 24)" agent-adaptor
#
# The service binds 0.0.0.0 inside the container, which it only does with API keys configured (the
# loopback rule: without a key it refuses any non-loopback address). docker/serve.toml declares the tenant
# `default` whose key comes from AGENT_ADAPTOR_API_KEY, so the container refuses to start without one.
# The image carries only the built-in `reference` agent; add CLIs by extending it (see README).

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin agent-adaptor \
 && cp target/release/agent-adaptor /usr/local/bin/agent-adaptor

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --create-home --home-dir /home/agent agent
COPY --from=build /usr/local/bin/agent-adaptor /usr/local/bin/agent-adaptor
COPY docker/serve.toml /etc/agent-adaptor/serve.toml
USER agent
WORKDIR /home/agent
ENV AGENT_ADAPTOR_CONFIG=/etc/agent-adaptor/serve.toml \
    AGENT_ADAPTOR_BIND=0.0.0.0:8080 \
    AGENT_ADAPTOR_DATA_DIR=/home/agent/data \
    AGENT_ADAPTOR_LOG_FORMAT=json
EXPOSE 8080
# `health` asks /healthz on the bind address (AGENT_ADAPTOR_BIND, asked on loopback); no curl in the image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["agent-adaptor", "health"]
ENTRYPOINT ["tini", "--", "agent-adaptor"]
CMD ["serve", "--no-discover"]
