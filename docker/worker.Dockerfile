# A crawl worker: `scrapy crawl ecommerce`, any number of replicas sharing one Redis.
#
#   docker build -f docker/worker.Dockerfile -t ecommerce-crawler-worker .
#   docker build -f docker/worker.Dockerfile --build-arg BASE_IMAGE=my-python:3.11 .
#   docker build -f docker/worker.Dockerfile --build-arg BROWSER_PACKAGES=chromium \
#       -t ecommerce-crawler-browser-worker .     # the browser worker (below)
#
# BASE_IMAGE must be a Debian-based Python 3.11 image with pip (python:3.11-slim or one
# made from it), so that it can be built where no registry can be reached. Every
# runtime dependency has a manylinux wheel (lxml, psycopg2-binary, ...): no compiler.
#
# No HEALTHCHECK: a worker's liveness is its heartbeat in Redis (`python -m master
# status`), and a worker that dies has its leased requests requeued by the others
# after LEASE_WORKER_TIMEOUT, so a restart by the orchestrator is all that is needed.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Build-time only (not kept in the image's environment): a package index for pip and
# an extra CA certificate, for builds behind a mirror or a TLS-inspecting proxy. See
# docker/certs/README.md; empty values change nothing.
ARG PIP_INDEX_URL=
ARG PIP_EXTRA_INDEX_URL=
ARG PIP_TRUSTED_HOST=
ARG EXTRA_CA_CERT=

# pip, requests and Python's ssl read the system trust store (which then holds the
# extra CA too) instead of their own bundled copies.
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

COPY docker/certs/ /tmp/extra-certs/
RUN set -eu; \
    if [ -n "$EXTRA_CA_CERT" ]; then \
        if [ ! -f "/tmp/extra-certs/$EXTRA_CA_CERT" ]; then \
            echo "EXTRA_CA_CERT=$EXTRA_CA_CERT: no such file in docker/certs/" >&2; exit 1; \
        fi; \
        cp "/tmp/extra-certs/$EXTRA_CA_CERT" /usr/local/share/ca-certificates/extra-ca.crt; \
        update-ca-certificates; \
    fi; \
    rm -rf /tmp/extra-certs

# The browser worker (docs/browser.md): BROWSER_PACKAGES=chromium installs Debian's
# chromium from the base image's own Debian archive (about 300 MB more), which the
# worker drives through Playwright (Playwright never downloads a browser), and sets
# BROWSER_EXECUTABLE to it. Empty (the default): a plain worker, no browser, which
# renders nothing. Its own layer before pip's: code changes do not reinstall it. apt
# reaches the archive directly or through the build's HTTP_PROXY (a build argument
# Docker predefines).
ARG BROWSER_PACKAGES=
RUN set -eu; \
    if [ -n "$BROWSER_PACKAGES" ]; then \
        apt-get update; \
        apt-get install -y --no-install-recommends $BROWSER_PACKAGES; \
        rm -rf /var/lib/apt/lists/*; \
        /usr/bin/chromium --version; \
    fi
# Chromium keeps its profile and caches under XDG_CONFIG_HOME and XDG_CACHE_HOME, else
# under HOME (/app, which the non-root user may not write: headless Chromium then fails
# to start): /tmp. BROWSER_EXECUTABLE is empty (ignored) on a plain worker.
ENV BROWSER_EXECUTABLE=${BROWSER_PACKAGES:+/usr/bin/chromium} \
    XDG_CONFIG_HOME=/tmp/.config \
    XDG_CACHE_HOME=/tmp/.cache

WORKDIR /app

# Dependencies first, in their own layer: it is rebuilt only when requirements.txt
# changes. Runtime pins only; the test tools of requirements-dev.txt stay out.
COPY requirements.txt ./
RUN set -eu; \
    for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST; do \
        eval "value=\${$name:-}"; [ -n "$value" ] || unset "$name"; \
    done; \
    pip install --no-cache-dir -r requirements.txt

# A fixed numeric uid, so that orchestrators can check it is not root.
RUN groupadd --system --gid 10001 crawler \
 && useradd --system --uid 10001 --gid crawler --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin crawler \
 && mkdir -p /app/data \
 && chown crawler:crawler /app/data

COPY scrapy.cfg ./
COPY crawler/ crawler/

USER 10001:10001

# Scrapy stops gracefully on the first SIGINT or SIGTERM (in-flight requests finish,
# items are flushed, the closing report is logged) and forcibly on the second. Give
# it time: docker-compose.yml sets stop_grace_period; `docker stop -t 60` does too.
STOPSIGNAL SIGINT
CMD ["scrapy", "crawl", "ecommerce"]
