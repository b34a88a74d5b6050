"""Async triggers run by the triggerer; each polls its blocking client in an executor thread."""
