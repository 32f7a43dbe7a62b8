"""tracker.sim"""
