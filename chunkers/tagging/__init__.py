"""Tagging: platform version ranges and availability, deprecation, frameworks, chunk types."""
