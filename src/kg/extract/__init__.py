"""Extraction: abstract text → mentions, per paper (spaCy pipeline, components, runner, cache)."""
