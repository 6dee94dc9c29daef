"""Checks: one module per rule family, each a set of pure functions registered by rule id."""
