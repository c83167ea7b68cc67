# A crawl worker: `scrapy crawl ecommerce`, any number of replicas sharing one Redis.
#
#   docker build -f docker/worker.Dockerfile -t ecommerce-crawler-worker .
#   docker build -f docker/worker.Dockerfile --build-arg BASE_IMAGE=my-python:3.11 .
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

WORKDIR /app

# Dependencies first, in their own layer: it is rebuilt only when requirements.txt
# changes. Runtime pins only; the test tools of requirements-dev.txt stay out.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

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
