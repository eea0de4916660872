"""Hand-made streams of each format, written the way its servers write them."""
