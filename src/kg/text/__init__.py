"""spaCy-free language knowledge: the curated vocabulary, word lists and markup masking."""
