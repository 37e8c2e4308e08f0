# a2aconsole in one container: `manage.py serve` = migrations + daphne (HTTP, WebSocket) + the embedded watch worker.
#   docker build -t a2aconsole .
#   docker run -p 8000:8000 -v a2a-workspace:/workspace -v a2a-data:/data a2aconsole
# The first start prints a one-time set-up link (or set A2ACONSOLE_OWNER_PASSWORD).
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

# Run from /app so the templates and static folders beside manage.py are found.
# Scale-out web processes can use plain daphne instead (no embedded worker; see README):
#   daphne -b 0.0.0.0 -p 8000 a2aconsole.asgi:application
ENTRYPOINT ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
