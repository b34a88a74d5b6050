# The README's two commands: `make demo` (set up + run the main job) and `make test` (set up + pass the tests).
.PHONY: setup system-deps demo test lint typecheck broker-start broker-stop clean

setup:
	@bash scripts/setup.sh

system-deps:
	@bash scripts/setup_system.sh

demo: setup
	@.venv/bin/streams-runtime demo $(ARGS)

# Two pytest processes (pytest-xdist); the integration tests stay on one of them, one after another
# (tests/conftest.py). PYTEST_WORKERS=0 runs the suite in one process.
PYTEST_WORKERS ?= 2
test: setup system-deps
	@.venv/bin/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(ARGS)

lint: setup
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@.venv/bin/lint-imports

# mypy (configured in pyproject.toml) over the whole package: strict on streams_runtime/state/ and
# streams_runtime/processor/internals/ (the assignor included).
typecheck: setup
	@.venv/bin/mypy streams_runtime

broker-start: setup
	@.venv/bin/streams-runtime broker start

broker-stop: setup
	@.venv/bin/streams-runtime broker stop

clean:
	rm -rf .venv .venv.lock .streams-runtime .pytest_cache
