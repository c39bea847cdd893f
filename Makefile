# `make run` starts the app; `make test` runs the whole suite. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: setup run test test-fast test-browser gpu-test bench clean

$(STAMP): requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.port $(PORT) --browser.gatherUsageStats false

# The house rules first (scripts/code_shape.py: file and function sizes, block arithmetic in
# Geometry, layer imports, no import cycle), then the whole suite: core, kernels (Triton
# interpreter), AppTest pages, browser tests. A broken rule fails the target before pytest runs.
test: $(STAMP)
	$(BIN)/python scripts/code_shape.py
	$(BIN)/python -m pytest tests -q -n 2 --timeout 900

test-fast: $(STAMP)
	$(BIN)/python scripts/code_shape.py
	$(BIN)/python -m pytest tests -q -n 2 -m "not browser" --timeout 900

test-browser: $(STAMP)
	$(BIN)/python -m pytest tests -q -m browser --timeout 900

clean:
	rm -rf $(VENV) .pytest_cache artifacts
