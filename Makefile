# The README's two commands: `make demo` (set up + run the main job) and `make test` (set up + pass the tests).
.PHONY: setup demo test lint broker-start broker-stop clean

setup:
	@bash scripts/setup.sh

demo: setup
	@.venv/bin/streams-runtime demo $(ARGS)

test: setup
	@.venv/bin/python -m pytest $(ARGS)

lint: setup
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@.venv/bin/lint-imports

broker-start: setup
	@.venv/bin/streams-runtime broker start

broker-stop: setup
	@.venv/bin/streams-runtime broker stop

clean:
	rm -rf .venv .streams-runtime .pytest_cache
