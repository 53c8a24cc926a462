"""Results: the documents a run writes (typed, versioned) and their store on disk."""
