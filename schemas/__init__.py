"""Data files shipped with kg: ontology, SHACL shapes, vocabularies, queries, input schemas."""
