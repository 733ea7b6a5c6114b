"""The private table: the only subpackage that reads raw rows; only the pipeline and the face import it."""
