"""The strategies, one module (or package) each, built by name from :mod:`.registry`."""
