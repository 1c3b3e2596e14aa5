"""The package's version (the one place it is written besides pyproject.toml; a test keeps
the two equal)."""

__version__ = "0.2.0"
