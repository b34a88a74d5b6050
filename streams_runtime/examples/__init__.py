"""Small example applications (``--app streams_runtime.examples.<module>:app``)."""
