// The StateServer module: see docs/architecture.md for what it owns.
