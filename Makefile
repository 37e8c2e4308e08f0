# The two commands a newcomer needs: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS := tests/js
JS_STAMP := $(JS)/node_modules/.installed
JS03 := tests/js03
JS03_STAMP := $(JS03)/node_modules/.installed
PY03 := tests/py03
PY03_STAMP := $(PY03)/.venv/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint bench clean chromium screenshots

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# The second SDK's test agents (npm @a2a-js/sdk), installed exactly as the committed lock file says.
$(JS_STAMP): $(JS)/package-lock.json $(JS)/package.json
	npm ci --prefix $(JS) --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

# The same SDK's last 0.3 release (protocol 0.3 agents), in its own directory and lock file.
$(JS03_STAMP): $(JS03)/package-lock.json $(JS03)/package.json
	npm ci --prefix $(JS03) --no-audit --no-fund --loglevel=error
	touch $(JS03_STAMP)

# The a2a-sdk 0.3 test agents, in a virtual environment of their own (0.3 and 1.3 cannot share one), installed
# exactly as the committed, hash-pinned requirements say.
$(PY03_STAMP): $(PY03)/requirements.txt
	rm -rf $(PY03)/.venv
	$(PY) -m venv $(PY03)/.venv
	$(PY03)/.venv/bin/pip install -q --require-hashes --no-deps -r $(PY03)/requirements.txt
	touch $(PY03_STAMP)

# `serve` applies migrations, creates ./workspace and prints the first-run link; Ctrl-C stops it.
run: $(STAMP)
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

chromium:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

# Two workers (both cores); the tests that share Redis and PostgreSQL run on one (tests/conftest.py).
test: $(STAMP) $(JS_STAMP) $(JS03_STAMP) $(PY03_STAMP) chromium lint
	$(BIN)/python -m pytest -q -n 2

bench: $(STAMP)
	for b in tests/bench/*.py; do $(BIN)/python $$b || exit 1; done

# A PNG of every page with live data (agents, watches, tasks, a conversation, a conflict) in test-output/screenshots/.
screenshots: $(STAMP) chromium
	$(BIN)/python -m tests.support.screenshots

clean:
	rm -rf $(VENV) test-output $(JS)/node_modules $(JS03)/node_modules $(PY03)/.venv
