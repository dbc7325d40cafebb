"""Corpus-wide resolution: mentions → concepts (acronyms, hierarchy, propagation, title roles)."""
