// evflowd: entry point is added with the daemon wiring.
