"""The bill: price models, what a request costs, and the frame every request carries."""
