"""Training and evaluating kg's entity recognizer."""
