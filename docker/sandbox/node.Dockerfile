# Node: the sandbox base plus Node.js and npm. No repository's packages: those are its
# environment's (`npm ci` into /workspace/node_modules through the egress gateway, lent to each
# sandbox; see src/jobs/environment.rs).
#
#   docker build --build-arg BASE=<an image> -f node.Dockerfile <an empty directory>
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
USER 10001:10001
