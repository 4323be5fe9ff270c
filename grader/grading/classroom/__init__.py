"""The class itself: its ids, its folders, its gradebook, where its learners' data lives."""
