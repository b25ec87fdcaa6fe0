"""Runnable studies: ``python -m experiments.<study>``."""
