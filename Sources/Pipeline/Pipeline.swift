// The Pipeline module: see docs/architecture.md for what it owns.
