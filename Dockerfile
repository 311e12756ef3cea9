# gdocs-bot container: docker build -t gdocs-bot .
#                      docker run --env-file .env -p 3000:3000 gdocs-bot
# Two stages: the builder makes a virtualenv with the exact versions of requirements.lock;
# the final image gets only that venv (no compilers, no pip cache) and runs as a non-root user.

FROM python:3.11.13-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/venv
# dependencies first, from the lock, so code changes don't reinstall them
COPY requirements.lock pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > runtime-requirements.txt \
    && /opt/venv/bin/pip install --no-cache-dir -c requirements.lock -r runtime-requirements.txt
COPY README.md ./
COPY bot ./bot
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps .

FROM python:3.11.13-slim-bookworm
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=3000
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin gdocs
COPY --from=builder /opt/venv /opt/venv
WORKDIR /app
USER 10001:10001
EXPOSE 3000
# slim has no curl: ask /healthz with the standard library
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=4)"]
CMD ["gdocs-bot", "serve"]
