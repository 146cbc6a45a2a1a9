"""The warm query worker (HTTP, one engine kept loaded) and the client that asks it."""
