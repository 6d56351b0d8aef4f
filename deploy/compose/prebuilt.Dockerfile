# The bot's image around a forgeward binary built already (on Debian 12, or anything with the
# same glibc or older), for compose.prebuilt.yaml: docker/Dockerfile's runtime stage, line for
# line, with the binary taken from the build context instead of its build stage. CI uses it
# because a release build inside Docker takes far longer than the suite may (deploy/README.md
# has the numbers); tests/integration/deploy.rs checks the two stages stay the same.
#
#   docker build -f deploy/compose/prebuilt.Dockerfile -t forgeward DIR   # DIR holds `forgeward`
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates bubblewrap docker.io tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10000 --home-dir /var/lib/forgeward --create-home forgeward
COPY forgeward /usr/local/bin/forgeward
USER forgeward
WORKDIR /var/lib/forgeward
ENV FORGEWARD_SERVER_LISTEN=0.0.0.0:8080 \
    FORGEWARD_SERVER_DATA_DIR=/var/lib/forgeward
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/forgeward"]
CMD ["serve"]
