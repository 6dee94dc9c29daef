"""cardaudit: audit a model repository's card against its files."""

__version__ = "0.1.0"
