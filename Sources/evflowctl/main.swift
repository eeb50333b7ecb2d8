// evflowctl: entry point is added with the client.
