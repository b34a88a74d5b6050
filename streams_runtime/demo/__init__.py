"""The demo: a payments application run by ``make demo`` (``streams-runtime demo``).

:mod:`streams_runtime.demo.app` is the application (a topology plus config, runnable with
``streams-runtime worker``); :mod:`streams_runtime.demo.run` is the main job that starts a broker,
two worker instances and a producer and prints the live results; :mod:`streams_runtime.demo.results`
holds the expected-versus-reported bookkeeping.
"""

from streams_runtime.demo.run import run_demo

__all__ = ["run_demo"]
