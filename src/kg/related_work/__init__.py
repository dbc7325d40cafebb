"""Related work: ranking with reasons, the postings index, batch ranking, look-up, embeddings."""
