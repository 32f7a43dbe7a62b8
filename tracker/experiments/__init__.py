"""tracker.experiments"""
