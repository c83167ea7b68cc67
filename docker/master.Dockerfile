# The master: `python -m master COMMAND` (seed, status, pause, resume, report, reset).
#
#   docker build -f docker/master.Dockerfile -t ecommerce-crawler-master .
#   docker run --rm -e REDIS_URL -v "$PWD/seeds:/seeds:ro" ecommerce-crawler-master seed /seeds/urls.txt
#   (REDIS_URL=redis://:PASSWORD@redis-host:6379/0 exported in the shell beforehand)
#
# BASE_IMAGE: see worker.Dockerfile. The master shares crawler/keys.py and
# crawler/seeds.py with the workers, so it ships crawler/ as well as master/.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, in their own layer (see worker.Dockerfile): runtime pins only.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

RUN groupadd --system --gid 10001 crawler \
 && useradd --system --uid 10001 --gid crawler --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin crawler

COPY scrapy.cfg ./
COPY crawler/ crawler/
COPY master/ master/

USER 10001:10001

ENTRYPOINT ["python", "-m", "master"]
CMD ["--help"]
