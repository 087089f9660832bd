"""Runtime concerns: settings, logging and metrics, the account registry, --check, demo mode."""
