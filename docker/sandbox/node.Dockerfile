# Node: the sandbox base plus Debian's nodejs and npm, and the repository's dependencies from
# `npm ci` at build time (the worker has no network). The build context holds only
# package.json and package-lock.json.
#
#   docker build --build-arg BASE=<sandbox image> -f node.Dockerfile <dir with the files>
#
# The modules live in /opt/forgeward/deps/node_modules, outside the checkout so they never show
# in the change: NODE_PATH makes require() find them and their binaries are on PATH. A worker
# whose tools insist on ./node_modules links it (`ln -s /opt/forgeward/deps/node_modules`); the
# bot leaves such a link out of the change.
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json /opt/forgeward/deps/
RUN cd /opt/forgeward/deps \
    && npm ci --no-audit --no-fund \
    && rm -rf /root/.npm
ENV NODE_PATH=/opt/forgeward/deps/node_modules \
    PATH=/opt/forgeward/deps/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_OFFLINE=true
USER 10001:10001
