"""The app's caches by resource: corpora, encodings, figures, WSD indexes."""
