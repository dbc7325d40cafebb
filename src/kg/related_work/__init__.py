"""Related work: ranking with reasons, the postings index, batch ranking, look-up, embeddings, and the
leaderboards of a built graph (`kg leaderboard`: the papers' result claims on a dataset, ranked)."""
