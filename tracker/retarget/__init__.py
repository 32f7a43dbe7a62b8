"""tracker.retarget"""
