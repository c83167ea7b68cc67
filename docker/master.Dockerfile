# The master: `python -m master COMMAND` (seed, status, pause, resume, report, reset).
#
#   docker build -f docker/master.Dockerfile -t ecommerce-crawler-master .
#   docker run --rm -e REDIS_URL -v "$PWD/seeds:/seeds:ro" ecommerce-crawler-master seed /seeds/urls.txt
#   (REDIS_URL=redis://:PASSWORD@redis-host:6379/0 exported in the shell beforehand)
#
# BASE_IMAGE: see worker.Dockerfile. The master shares crawler/core/keys.py and
# crawler/policy/seeds.py with the workers, so it ships crawler/ as well as master/.
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

WORKDIR /app

# Dependencies first, in their own layer (see worker.Dockerfile): runtime pins only.
COPY requirements.txt ./
RUN set -eu; \
    for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST; do \
        eval "value=\${$name:-}"; [ -n "$value" ] || unset "$name"; \
    done; \
    pip install --no-cache-dir -r requirements.txt

RUN groupadd --system --gid 10001 crawler \
 && useradd --system --uid 10001 --gid crawler --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin crawler

COPY scrapy.cfg ./
COPY crawler/ crawler/
COPY master/ master/

USER 10001:10001

ENTRYPOINT ["python", "-m", "master"]
CMD ["--help"]
