"""Driver packages: everything one kernel-mode driver brings to an adapter (its factory, configuration, user-mode
encoder of private allocation data, and capabilities)."""
