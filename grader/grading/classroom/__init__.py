"""The class itself: its ids, its folders, where its learners' data lives."""
