# Python: the sandbox base plus python3 and a virtualenv at /opt/venv, on PATH, holding the
# repository's dependencies installed at build time (the worker has no network). The build
# context holds only the dependency files: requirements*.txt and pyproject.toml.
#
#   docker build --build-arg BASE=<sandbox image> -f python.Dockerfile <dir with the files>
#
# pyproject.toml: [project] dependencies and every optional-dependencies group (tests usually
# live in one) are installed; the project itself is not (its source is not in the context), so
# a requirements line naming it (`-e .`, `.[test]`, `file:…`) is passed over.
# No compiler: dependencies come as wheels; one that needs building from source fails the build
# (a clear job error) rather than making every Python image hundreds of megabytes larger.
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
COPY . /opt/forgeward/deps/
# The legacy builder (no BuildKit) has no heredocs: the pyproject reader is one line.
RUN python3 -m venv /opt/venv \
    && cd /opt/forgeward/deps \
    && for f in requirements*.txt; do \
        [ -e "$f" ] || continue; \
        grep -vE '^[[:space:]]*((-e|--editable)[[:space:]]+)?(\.|file:)' "$f" > "$f.deps" || :; \
        /opt/venv/bin/pip install --no-cache-dir -r "$f.deps" || exit 1; \
    done \
    && if [ -e pyproject.toml ]; then \
        /opt/venv/bin/python -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")).get("project", {}); print("\n".join(p.get("dependencies", []) + [d for g in p.get("optional-dependencies", {}).values() for d in g]))' > /tmp/pyproject-deps.txt \
        && /opt/venv/bin/pip install --no-cache-dir -r /tmp/pyproject-deps.txt \
        && rm /tmp/pyproject-deps.txt; \
    fi
ENV VIRTUAL_ENV=/opt/venv \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
