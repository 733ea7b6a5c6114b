"""Public metadata of the columns: bounds, schemas, dates, and the maps between their units and [-1, 1]^d."""
