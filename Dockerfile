# a2aconsole in one container: `manage.py serve` = migrations + daphne (HTTP, WebSocket) + the embedded watch worker.
#   docker build -t a2aconsole .
#   docker run -p 8000:8000 -v a2a-workspace:/workspace -v a2a-data:/data \
#     -e ALLOWED_HOSTS=console.example,localhost a2aconsole
# ALLOWED_HOSTS must list the host names browsers use (the image allows only localhost and 127.0.0.1).
# Behind an HTTPS proxy set -e A2ACONSOLE_PUBLIC_URL=https://console.example -e A2ACONSOLE_TRUST_PROXY=true
# instead, and publish the port on 127.0.0.1 only (README: "Behind HTTPS").
# The first start prints a one-time set-up link in the log (or set A2ACONSOLE_OWNER_PASSWORD).
# Bind-mounted folders must be writable by uid 10001; named volumes get the right owner from the image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    A2ACONSOLE_WORKSPACE=/workspace \
    A2ACONSOLE_DATA=/data \
    ALLOWED_HOSTS=localhost,127.0.0.1

WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY a2aconsole ./a2aconsole
RUN pip install .
COPY templates ./templates
COPY static ./static

RUN useradd --system --create-home --uid 10001 console \
    && mkdir -p /workspace /data \
    && chown console:console /workspace /data
USER console

VOLUME ["/workspace", "/data"]
EXPOSE 8000

# /readyz: the database, the channel layer and the watch worker's lease (503 naming what failed). It answers before
# the ALLOWED_HOSTS check, so the probe needs no allowed Host; python and urllib because the slim image has no curl.
# Scale-out workers (runworker) serve no HTTP here: their compose service replaces this check.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/readyz', timeout=8)"]

# Run from /app so the templates and static folders beside manage.py are found.
# Scale-out: deploy/compose.yaml (see README). By hand: web containers with -e A2ACONSOLE_WATCH_WORKER=external -e REDIS_URL=... -e DATABASE_URL=...
# -e SECRET_KEY=..., and a worker container with --entrypoint python ... manage.py runworker a2a-watches.
ENTRYPOINT ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
