"""Sensors that defer to the async triggers of :mod:`streams_ops.triggers`."""
