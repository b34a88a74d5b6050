"""Operators: template fields in ``__init__``, the work in ``execute``."""
