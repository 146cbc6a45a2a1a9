"""The MCP server on the official SDK, with its ingest and watch children."""
