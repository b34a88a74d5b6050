# The README's two commands: `make demo` (set up + run the main job) and `make test` (set up + pass the tests).
.PHONY: setup setup-kafka setup-spark-kafka setup-oracle fuzz-oracle test-multi-host setup-bench system-deps demo test test-pythons test-stack stack stack-down stack-status lint typecheck docs broker-start broker-stop clean

# PYTHON=3.12 (or python3.12, or a path) picks the interpreter of .venv: a .venv of another Python version
# is made again with it. Without PYTHON=, .venv keeps the interpreter it has (a new one: the first of
# 3.11, 3.12, 3.13 found, on PATH or under pyenv).
setup:
	@bash scripts/setup.sh

# Apache Kafka 4.3.1's classpath from Maven Central into .jvm/ (once; needs Java 17 and Maven)
setup-kafka:
	@bash scripts/setup_kafka.sh

# Spark's own Kafka connector for the pinned pyspark (jvm/spark-kafka/pom.xml: the jars pyspark lacks)
# from Maven Central into .jvm/ (once; needs Java 17 and Maven); the backfills read Apache Kafka with it
setup-spark-kafka:
	@bash scripts/setup_spark_kafka.sh

# The Kafka Streams 4.3.1 oracle (jvm/kafka-streams-oracle, docs/oracle.md) built into .jvm/ (once;
# needs a JDK 17 and Maven): tests/oracle compare this project's DSL with it
setup-oracle:
	@bash scripts/setup_kafka_streams_oracle.sh

# The oracle's generated cases ORACLE_SCALE times over (10 by default: about 4,000 cases instead of
# the test suite's 400, derandomized too); the first difference of each family fails its test with
# the shrunk case (docs/oracle.md); no per-test time limit (a family takes minutes)
ORACLE_SCALE ?= 10
fuzz-oracle: setup setup-oracle
	@ORACLE_SCALE=$(ORACLE_SCALE) .venv/bin/python -m pytest -p no:cacheprovider --timeout=0 tests/oracle $(ARGS)

# What bench/peers.py compares with: Kafka Streams 4.3.1 running the benchmark's workloads
# (jvm/kafka-streams-bench, built into .jvm/) and Quix Streams in .venv-quix (once; needs Java 17 and Maven)
setup-bench: setup
	@bash scripts/setup_bench.sh

system-deps:
	@bash scripts/setup_system.sh

# ARGS="--broker kafka" runs the demo on Apache Kafka instead of the embedded Tansu
demo: setup
	@case "$(ARGS)" in *kafka*) bash scripts/setup_kafka.sh ;; esac
	@.venv/bin/streams-runtime demo $(ARGS)

# The whole suite on Apache Kafka 4.3.1, and the integration tests also on the embedded Tansu
# (STREAMS_TEST_BROKERS=kafka,tansu; tests/conftest.py). Two pytest processes (pytest-xdist): the
# integration tests of each broker run one after another on one of them. PYTEST_WORKERS=0 runs the
# suite in one process. The multi-host test (network namespaces) is in it: as root (CI) it runs,
# elsewhere it is skipped with the reason.
PYTEST_WORKERS ?= 2
STREAMS_TEST_BROKERS ?= kafka,tansu
test: setup system-deps setup-kafka setup-spark-kafka setup-oracle
	@.venv/bin/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --broker $(STREAMS_TEST_BROKERS) -m "not stack" $(ARGS)

# Only the multi-host test (also part of `make test`): workers on two hosts of their own against a
# broker on a third (network namespaces; needs root; tests/integration/test_multi_host.py)
test-multi-host: setup setup-kafka
	@.venv/bin/python -m pytest -p no:randomly --broker kafka -m multi_host tests/integration/test_multi_host.py $(ARGS)

# docker-compose.yml's services as native processes on 127.0.0.1, with deploy/stack.env's values
# (scripts/stack.sh; docs/how-to/deploy.md, "Without Docker"): `make stack`, `make stack-status`,
# `make stack-down`
stack: setup system-deps setup-kafka setup-spark-kafka
	@bash scripts/stack.sh up

stack-status:
	@bash scripts/stack.sh status

stack-down:
	@bash scripts/stack.sh down

# The native stack end to end (tests/deploy/test_stack.py, marker stack): up, provisioning, demo
# data, interactive queries, a published backfill on the Spark cluster, the asset event, Prometheus,
# down; minutes and ~3 GB of memory, so not in `make test`
test-stack: setup system-deps setup-kafka setup-spark-kafka
	@.venv/bin/python -m pytest -p no:randomly -rP -m stack tests/deploy/test_stack.py $(ARGS)

# The broker-free tests (tests/unit, tests/topology, tests/tools) on the other supported Pythons, each in
# its own .venv-3.X built from requirements.lock like .venv; a version not installed fails, naming it.
PYTHONS ?= 3.12 3.13
test-pythons:
	@PYTHONS="$(PYTHONS)" bash scripts/test_pythons.sh $(ARGS)

lint: setup
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@.venv/bin/lint-imports

# mypy (configured in pyproject.toml) over the whole package, strict; then the Any gate
# (scripts/any_share.py): prints the share of parameters and returns typed Any, fails above 10% of
# parameters or on an explicit Any neither at a documented boundary nor on the not-yet-typed list.
typecheck: setup
	@.venv/bin/mypy streams_runtime
	@.venv/bin/python scripts/any_share.py

# The documentation site (mkdocs.yml) built with --strict into .streams-runtime/site: open
# .streams-runtime/site/index.html (it needs no network). The configuration reference is generated
# from streams_runtime/config.py by scripts/docs_hooks.py.
docs: setup
	@NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

# KIND=kafka NODES=3 starts a 3-node Apache Kafka cluster instead of the embedded Tansu
KIND ?= tansu
NODES ?= 1
broker-start: setup
	@case "$(KIND)" in kafka) bash scripts/setup_kafka.sh ;; esac
	@.venv/bin/streams-runtime broker start --kind $(KIND) --nodes $(NODES)

broker-stop: setup
	@.venv/bin/streams-runtime broker stop

clean:
	rm -rf .venv .venv.lock .venv-3.* .venv-quix .streams-runtime .pytest_cache .jvm
