# Python: the sandbox base plus python3 with venv and pip, and pytest (the runner verification
# uses when a project names none). No dependency of any repository: those are its environment's,
# installed by its setup into /workspace/.venv through the egress gateway and lent to each
# sandbox (see src/jobs/environment.rs).
#
#   docker build --build-arg BASE=<an image> -f python.Dockerfile <an empty directory>
#
# No compiler: dependencies come as wheels; one that needs building from source fails the setup
# (a clear job error) rather than making every Python image hundreds of megabytes larger.
ARG BASE
FROM ${BASE}
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv python3-pip python3-pytest \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
