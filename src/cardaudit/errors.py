"""Error hierarchy: one root, one base per layer.

Every error carries a one-line, user-facing message; the CLI prints it and exits 2.
"""


class AuditError(Exception):
    """Root of every error cardaudit raises on purpose."""


class UsageError(AuditError):
    """The command line or configuration asks for something impossible."""


class SourceError(AuditError):
    """Evidence could not be acquired (missing path, network failure, gated repo...)."""


class RulesError(AuditError):
    """The rule catalogue (rules/*.yaml) is broken: a packaging or development error."""


class StoreError(AuditError):
    """The tracking database could not be read or written."""
