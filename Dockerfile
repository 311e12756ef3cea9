# gdocs-bot container: docker build -t gdocs-bot .
#                      docker run --env-file .env -p 3000:3000 --read-only -v gdocs-data:/data gdocs-bot
# Two stages: the builder makes a virtualenv with the exact versions of requirements.lock,
# then removes pip and setuptools from it; the final image gets only that venv (no compilers,
# no installer, no pip cache) and runs as a non-root user that can write only to /data.

FROM python:3.11.13-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/venv
# dependencies first, from the lock, so code changes don't reinstall them
COPY requirements.lock pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > runtime-requirements.txt \
    && /opt/venv/bin/pip install --no-cache-dir -c requirements.lock -r runtime-requirements.txt
COPY README.md ./
COPY bot ./bot
# the project itself (pip precompiles it, so nothing is written at run time), then pip
# uninstalls setuptools, wheel and itself: nothing in the image installs packages later
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps . \
    && /opt/venv/bin/pip uninstall --yes setuptools wheel pip \
    && rm -f /opt/venv/bin/activate* /opt/venv/bin/Activate.ps1
# the wheels' compiled extensions carry their debug symbols (uvloop's alone is 12 MB of
# them): stripped, the final image is ~15 MB smaller and runs the same code
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils=2.40-2 \
    && find /opt/venv -name "*.so" -exec strip --strip-unneeded {} + \
    && rm -rf /var/lib/apt/lists/*

FROM python:3.11.13-slim-bookworm
ARG VERSION=0.1.0
# the repository's public URL; pass --build-arg SOURCE_URL=… when publishing the image
ARG SOURCE_URL=https://github.com/OWNER/gdocs-bot
LABEL org.opencontainers.image.title="gdocs-bot" \
      org.opencontainers.image.description="A Slack bot that answers developers' questions from Google's own documentation" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0"
# STATE_URL: the state store's SQLite file on the /data volume (Redis/Valkey: override it)
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=3000 \
    STATE_URL=sqlite:////data/gdocs.db
# the bot's user and group are both 10001; /data is theirs (a new named volume copies this
# owner), /app (the working directory) stays root's, so the root filesystem can be read-only
RUN groupadd --gid 10001 gdocs \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin gdocs \
    && mkdir -p /data /app \
    && chown 10001:10001 /data \
    && chmod 0750 /data
COPY --from=builder /opt/venv /opt/venv
WORKDIR /app
VOLUME ["/data"]
USER 10001:10001
EXPOSE 3000
# slim has no curl: ask /healthz with the standard library (an error or non-2xx exits 1)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=4)"]
CMD ["gdocs-bot", "serve"]
