"""The operator commands of ``streams-runtime``: describe, status, reset (one module each)."""
