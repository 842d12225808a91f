"""Built-in parsers, one module each: ``Options`` (pydantic, extra="forbid") and ``parse(inp, options)``."""
