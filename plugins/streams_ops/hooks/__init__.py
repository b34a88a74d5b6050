"""Hooks: an Airflow Connection in, a ready client out."""
