"""Process concerns that know no tools: settings, logging and metrics, token crypto, audit, write safety, HTTP."""
