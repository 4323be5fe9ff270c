"""A learner's data across the class: the places it is found in, the erasure register."""
